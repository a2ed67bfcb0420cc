// networkpolicies (networking.<suffix>/v1, namespaced, `netpol`): stored and
// validated as upstream (ValidateNetworkPolicy messages, the v1 defaults:
// protocol TCP, policyTypes from the rules), with its table (NAME
// POD-SELECTOR AGE). Not enforced: no orch component programs the rules.

import { isIP } from "node:net";
import { field, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { formatLabelSelector, validateLabelSelector } from "../apps/workload.js";
import { isValidPortName, isValidPortNum } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { NETWORKING_V1 } from "./schemas.js";
import type { NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort } from "./types.js";

const PROTOCOLS = ["TCP", "UDP", "SCTP"];
const POLICY_TYPES = ["Ingress", "Egress"];

interface Cidr {
  readonly family: 4 | 6;
  readonly bits: bigint;
  readonly prefix: number;
}

function parseCidr(value: string): Cidr | undefined {
  const slash = value.indexOf("/");
  if (slash < 0) return undefined;
  const ip = value.slice(0, slash);
  const prefixText = value.slice(slash + 1);
  const family = isIP(ip);
  if (family === 0 || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const width = family === 4 ? 32 : 128;
  if (prefix > width) return undefined;
  let bits = 0n;
  if (family === 4) for (const part of ip.split(".")) bits = (bits << 8n) | BigInt(Number(part));
  else {
    const [head, tail] = ip.includes("::") ? ip.split("::") : [ip, undefined];
    const words = (s: string | undefined) => (s ? s.split(":") : []);
    const h = words(head);
    const t = words(tail);
    // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two words.
    const expand = (ws: string[]) => ws.flatMap((w) => (w.includes(".") ? ((n) => [(n >> 16).toString(16), (n & 0xffff).toString(16)])(w.split(".").reduce((a, b) => a * 256 + Number(b), 0)) : [w]));
    const hw = expand(h);
    const tw = expand(t);
    const all = tail === undefined ? hw : [...hw, ...Array(8 - hw.length - tw.length).fill("0"), ...tw];
    for (const w of all) bits = (bits << 16n) | BigInt(parseInt(w, 16));
  }
  return { family: family as 4 | 6, bits, prefix };
}

function contains(outer: Cidr, inner: Cidr): boolean {
  if (outer.family !== inner.family) return false;
  const shift = BigInt((outer.family === 4 ? 32 : 128) - outer.prefix);
  return outer.bits >> shift === inner.bits >> shift;
}

function validatePort(port: NetworkPolicyPort, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (port.protocol != null && !PROTOCOLS.includes(port.protocol)) errs.push(field.notSupported(`${at}.protocol`, port.protocol, PROTOCOLS));
  if (port.port != null) {
    if (typeof port.port === "number") {
      for (const m of isValidPortNum(port.port)) errs.push(field.invalid(`${at}.port`, port.port, m));
      if (port.endPort != null) {
        if (port.endPort < port.port) errs.push(field.invalid(`${at}.endPort`, port.port, "must be greater than or equal to `port`"));
        for (const m of isValidPortNum(port.endPort)) errs.push(field.invalid(`${at}.endPort`, port.endPort, m));
      }
    } else {
      if (port.endPort != null) errs.push(field.invalid(`${at}.endPort`, port.endPort, "may not be specified when `port` is non-numeric"));
      for (const m of isValidPortName(port.port)) errs.push(field.invalid(`${at}.port`, port.port, m));
    }
  } else if (port.endPort != null) errs.push(field.invalid(`${at}.endPort`, port.endPort, "may not be specified when `port` is not specified"));
  return errs;
}

function validateIPBlock(block: { cidr?: string; except?: string[] | null }, at: string): FieldError[] {
  if (!block.cidr) return [field.required(`${at}.cidr`, "")];
  const cidr = parseCidr(block.cidr);
  if (cidr === undefined) return [field.invalid(`${at}.cidr`, block.cidr, "not a valid CIDR")];
  const errs: FieldError[] = [];
  for (const [i, text] of (block.except ?? []).entries()) {
    const except = parseCidr(text);
    if (except === undefined) return [...errs, field.invalid(`${at}.except[${i}]`, text, "not a valid CIDR")];
    if (!contains(cidr, except) || cidr.prefix >= except.prefix) errs.push(field.invalid(`${at}.except[${i}]`, text, "must be a strict subset of `cidr`"));
  }
  return errs;
}

function validatePeer(peer: NetworkPolicyPeer, at: string): FieldError[] {
  const errs: FieldError[] = [];
  let peers = 0;
  if (peer.podSelector != null) {
    peers++;
    errs.push(...validateLabelSelector(peer.podSelector, `${at}.podSelector`));
  }
  if (peer.namespaceSelector != null) {
    peers++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, `${at}.namespaceSelector`));
  }
  if (peer.ipBlock != null) {
    peers++;
    errs.push(...validateIPBlock(peer.ipBlock, `${at}.ipBlock`));
  }
  if (peers === 0) errs.push(field.required(at, "must specify a peer"));
  else if (peers > 1 && peer.ipBlock != null) errs.push(field.forbidden(at, "may not specify both ipBlock and another peer"));
  return errs;
}

export function validateNetworkPolicy(np: NetworkPolicy): FieldError[] {
  const spec = np.spec ?? {};
  const errs = validateLabelSelector(spec.podSelector ?? {}, "spec.podSelector");
  (spec.ingress ?? []).forEach((rule, i) => {
    (rule.ports ?? []).forEach((p, j) => errs.push(...validatePort(p ?? {}, `spec.ingress[${i}].ports[${j}]`)));
    (rule.from ?? []).forEach((p, j) => errs.push(...validatePeer(p ?? {}, `spec.ingress[${i}].from[${j}]`)));
  });
  (spec.egress ?? []).forEach((rule, i) => {
    (rule.ports ?? []).forEach((p, j) => errs.push(...validatePort(p ?? {}, `spec.egress[${i}].ports[${j}]`)));
    (rule.to ?? []).forEach((p, j) => errs.push(...validatePeer(p ?? {}, `spec.egress[${i}].to[${j}]`)));
  });
  const types = spec.policyTypes ?? [];
  if (types.length > POLICY_TYPES.length) return [...errs, field.invalid("spec.policyTypes", types, "may not specify more than two policyTypes")];
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) errs.push(field.notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES));
  });
  return errs;
}

export function networkPolicies(naming: Naming): ResourceDefinition {
  return defineResource<NetworkPolicy>({
    group: naming.networkingGroup,
    versions: ["v1"],
    resource: "networkpolicies",
    singular: "networkpolicy",
    kind: "NetworkPolicy",
    namespaced: true,
    shortNames: ["netpol"],
    schema: `${NETWORKING_V1}.NetworkPolicy`,
    defaults(np) {
      const spec = (np.spec ??= {});
      spec.podSelector ??= {};
      for (const rule of [...(spec.ingress ?? []), ...(spec.egress ?? [])]) for (const port of rule?.ports ?? []) if (port != null) port.protocol ??= "TCP";
      if ((spec.policyTypes ?? []).length === 0) spec.policyTypes = (spec.egress ?? []).length > 0 ? ["Ingress", "Egress"] : ["Ingress"];
    },
    validate: validateNetworkPolicy,
    validateUpdate: validateNetworkPolicy,
    table: nameAgeTable<NetworkPolicy>({
      columns: [{ name: "Pod-Selector", type: "string", description: "Selects the pods to which this NetworkPolicy object applies.", priority: 0 }],
      cells: (np) => [formatLabelSelector(np.spec?.podSelector)],
    }),
  });
}
