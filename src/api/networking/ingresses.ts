// ingresses (networking.<suffix>/v1, namespaced, `ing`, status subresource):
// upstream's ValidateIngressCreate/Update/StatusUpdate messages and its table
// (NAME CLASS HOSTS ADDRESS PORTS AGE). No controller of orch serves them: an
// ingress controller (any upstream one) reads them and writes the status.

import { isIP } from "node:net";
import { DNS1123_SUBDOMAIN_MAX_LENGTH, field, isDNS1035Label, isDNS1123Subdomain, isValidPathSegmentName, maxLenError, regexError, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { isValidPortName, isValidPortNum } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { NETWORKING_V1 } from "./schemas.js";
import type { Ingress, IngressBackend, IngressRule, TypedReference } from "./types.js";

const PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"];
const INVALID_SEQUENCES = ["//", "/./", "/../", "%2f", "%2F"];
const INVALID_SUFFIXES = ["/..", "/."];
const WILDCARD_FMT = "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const WILDCARD_RE = new RegExp(`^${WILDCARD_FMT}$`);
const WILDCARD_MSG =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
/** Width of the Address cell outside `-o wide`, as upstream's loadBalancerWidth. */
const ADDRESS_WIDTH = 16;

/** upstream's IsWildcardDNS1123Subdomain. */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!WILDCARD_RE.test(value)) errs.push(regexError(WILDCARD_MSG, WILDCARD_FMT, "*.example.com"));
  return errs;
}

/** A host of a rule or of a TLS entry: a DNS subdomain, or a wildcard one when it has a `*`. */
function hostErrors(host: string, path: string): FieldError[] {
  const msgs = host.includes("*") ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
  return msgs.map((m) => field.invalid(path, host, m));
}

/** upstream's validateIngressTypedLocalObjectReference (IngressClass parameters use it too). */
export function validateTypedReference(ref: TypedReference | null | undefined, path: string): FieldError[] {
  if (ref == null) return [];
  const errs: FieldError[] = [];
  if (ref.apiGroup != null) for (const m of isDNS1123Subdomain(ref.apiGroup)) errs.push(field.invalid(`${path}.apiGroup`, ref.apiGroup, m));
  if (!ref.kind) errs.push(field.required(`${path}.kind`, "kind is required"));
  else for (const m of isValidPathSegmentName(ref.kind)) errs.push(field.invalid(`${path}.kind`, ref.kind, m));
  if (!ref.name) errs.push(field.required(`${path}.name`, "name is required"));
  else for (const m of isValidPathSegmentName(ref.name)) errs.push(field.invalid(`${path}.name`, ref.name, m));
  return errs;
}

function validateBackend(backend: IngressBackend, path: string): FieldError[] {
  const svc = backend.service;
  if (backend.resource != null && svc != null) return [field.invalid(path, "", "cannot set both resource and service backends")];
  if (backend.resource != null) return validateTypedReference(backend.resource, `${path}.resource`);
  if (svc == null) return [field.invalid(path, "", "resource or service backend is required")];
  const errs: FieldError[] = [];
  if (!svc.name) errs.push(field.required(`${path}.service.name`, ""));
  else for (const m of isDNS1035Label(svc.name)) errs.push(field.invalid(`${path}.service.name`, svc.name, m));
  const name = svc.port?.name ?? "";
  const number = svc.port?.number ?? 0;
  if (name !== "" && number !== 0) errs.push(field.invalid(path, "", "cannot set both port name & port number"));
  else if (name !== "") for (const m of isValidPortName(name)) errs.push(field.invalid(`${path}.service.port.name`, name, m));
  else if (number !== 0) for (const m of isValidPortNum(number)) errs.push(field.invalid(`${path}.service.port.number`, number, m));
  else errs.push(field.required(path, "port name or number is required"));
  return errs;
}

function validatePath(p: { path?: string; pathType?: string; backend?: IngressBackend }, at: string): FieldError[] {
  if (p.pathType == null) return [field.required(`${at}.pathType`, "pathType must be specified")];
  const errs: FieldError[] = [];
  const value = p.path ?? "";
  if (p.pathType === "Exact" || p.pathType === "Prefix") {
    if (!value.startsWith("/")) errs.push(field.invalid(`${at}.path`, value, "must be an absolute path"));
    for (const seq of INVALID_SEQUENCES) if (value.includes(seq)) errs.push(field.invalid(`${at}.path`, value, `must not contain '${seq}'`));
    for (const suffix of INVALID_SUFFIXES) if (value.endsWith(suffix)) errs.push(field.invalid(`${at}.path`, value, `cannot end with '${suffix}'`));
  } else if (p.pathType === "ImplementationSpecific") {
    if (value !== "" && !value.startsWith("/")) errs.push(field.invalid(`${at}.path`, value, "must be an absolute path"));
  } else {
    errs.push(field.notSupported(`${at}.pathType`, p.pathType, PATH_TYPES));
  }
  errs.push(...validateBackend(p.backend ?? {}, `${at}.backend`));
  return errs;
}

function validateRuleValue(rule: IngressRule, at: string): FieldError[] {
  if (rule.http == null) return [];
  const paths = rule.http.paths ?? [];
  const errs = paths.length === 0 ? [field.required(`${at}.http.paths`, "")] : [];
  paths.forEach((p, j) => errs.push(...validatePath(p ?? {}, `${at}.http.paths[${j}]`)));
  return errs;
}

/** What an update may keep of a stored object that today's rules refuse (upstream's IngressValidationOptions). */
interface Leniency {
  readonly invalidSecretName: boolean;
  readonly invalidWildcardHostRule: boolean;
}

const STRICT: Leniency = { invalidSecretName: false, invalidWildcardHostRule: false };

function leniencyFor(old: Ingress): Leniency {
  return {
    invalidSecretName: (old.spec?.tls ?? []).some((tls) => !!tls.secretName && isDNS1123Subdomain(tls.secretName).length > 0),
    invalidWildcardHostRule: (old.spec?.rules ?? []).some((rule) => (rule.host ?? "").includes("*") && validateRuleValue(rule, "").length > 0),
  };
}

function validateRules(rules: readonly IngressRule[], leniency: Leniency): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const at = `spec.rules[${i}]`;
    const host = rule.host ?? "";
    if (host !== "") {
      if (isIP(host) !== 0) errs.push(field.invalid(`${at}.host`, host, "must be a DNS name, not an IP address"));
      errs.push(...hostErrors(host, `${at}.host`));
    }
    if (!host.includes("*") || !leniency.invalidWildcardHostRule) errs.push(...validateRuleValue(rule, at));
  });
  return errs;
}

function validate(ing: Ingress, leniency: Leniency = STRICT): FieldError[] {
  const spec = ing.spec ?? {};
  const errs: FieldError[] = [];
  const rules = spec.rules ?? [];
  if (rules.length === 0 && spec.defaultBackend == null) errs.push(field.invalid("spec", spec.rules ?? null, "either `defaultBackend` or `rules` must be specified"));
  if (spec.defaultBackend != null) errs.push(...validateBackend(spec.defaultBackend, "spec.defaultBackend"));
  errs.push(...validateRules(rules, leniency));
  (spec.tls ?? []).forEach((tls, i) => {
    (tls.hosts ?? []).forEach((host, j) => errs.push(...hostErrors(host, `spec.tls[${i}].hosts[${j}]`)));
    if (tls.secretName && !leniency.invalidSecretName) for (const m of isDNS1123Subdomain(tls.secretName)) errs.push(field.invalid(`spec.tls[${i}].secretName`, tls.secretName, m));
  });
  if (spec.ingressClassName != null) for (const m of isDNS1123Subdomain(spec.ingressClassName)) errs.push(field.invalid("spec.ingressClassName", spec.ingressClassName, m));
  return errs;
}

/** upstream's ValidateLoadBalancerStatus, on an Ingress's status. */
function validateStatus(ing: Ingress): FieldError[] {
  const errs: FieldError[] = [];
  (ing.status?.loadBalancer?.ingress ?? []).forEach((point, i) => {
    const at = `status.loadBalancer.ingress[${i}]`;
    if (point.ip && isIP(point.ip) === 0) errs.push(field.invalid(`${at}.ip`, point.ip, "must be a valid IP address"));
    if (point.hostname) {
      for (const m of isDNS1123Subdomain(point.hostname)) errs.push(field.invalid(`${at}.hostname`, point.hostname, m));
      if (isIP(point.hostname) !== 0) errs.push(field.invalid(`${at}.hostname`, point.hostname, "must be a DNS name, not an IP address"));
    }
  });
  return errs;
}

/** The Hosts cell: the first three hosts of the rules, "*" when none has one. */
export function formatHosts(rules: readonly IngressRule[]): string {
  const max = 3;
  const list: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (list.length === max) more = true;
    if (!more && rule.host) list.push(rule.host);
  }
  if (list.length === 0) return "*";
  return more ? `${list.join(",")} + ${rules.length - max} more...` : list.join(",");
}

/** The Address cell: the sorted distinct IPs (or hostnames), cut to 16 characters. */
export function formatAddress(ing: Ingress): string {
  const set = new Set<string>();
  for (const point of ing.status?.loadBalancer?.ingress ?? []) {
    if (point.ip) set.add(point.ip);
    else if (point.hostname) set.add(point.hostname);
  }
  const all = [...set].sort().join(",");
  return all.length > ADDRESS_WIDTH ? `${all.slice(0, ADDRESS_WIDTH - 3)}...` : all;
}

export function ingresses(naming: Naming): ResourceDefinition {
  const classAnnotation = `${naming.keyDomain}/ingress.class`;
  return defineResource<Ingress>({
    group: naming.networkingGroup,
    versions: ["v1"],
    resource: "ingresses",
    singular: "ingress",
    kind: "Ingress",
    namespaced: true,
    shortNames: ["ing"],
    schema: `${NETWORKING_V1}.Ingress`,
    subresources: [status({ validate: (ing) => validateStatus(ing) })],
    prepareForCreate(ing) {
      ing.status = {};
    },
    validate(ing) {
      const errs = validate(ing);
      const annotation = ing.metadata.annotations?.[classAnnotation];
      if (annotation !== undefined && ing.spec?.ingressClassName != null) {
        errs.push(field.invalid(`annotations.${classAnnotation}`, annotation, "can not be set when the class field is also set"));
      }
      return errs;
    },
    validateUpdate: (ing, old) => validate(ing, leniencyFor(old)),
    table: nameAgeTable<Ingress>({
      columns: [
        { name: "Class", type: "string", description: "The name of the IngressClass resource that should be used for additional configuration", priority: 0 },
        { name: "Hosts", type: "string", description: "Hosts that incoming requests are matched against before the ingress rule", priority: 0 },
        { name: "Address", type: "string", description: "Address is a list containing ingress points for the load-balancer", priority: 0 },
        { name: "Ports", type: "string", description: "Ports of TLS configurations that open", priority: 0 },
      ],
      cells: (ing) => [ing.spec?.ingressClassName ?? "<none>", formatHosts(ing.spec?.rules ?? []), formatAddress(ing), (ing.spec?.tls ?? []).length > 0 ? "80, 443" : "80"],
    }),
  });
}
