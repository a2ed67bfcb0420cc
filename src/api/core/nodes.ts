// nodes: cluster-scoped, status written by the node agent (seed 001, "Node
// status"); taints validated as upstream; podCIDRs and providerID may only be
// set once; the table shows Ready/NotReady/SchedulingDisabled and the roles.

import { isIP } from "node:net";
import { field, isValidLabelValue, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition, type TableColumn } from "../resource.js";
import { proxy, status } from "../subresources/index.js";
import { AGE_COLUMN, NAME_COLUMN, formatAge } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import { validateEnum, validateQualifiedName, jsonEqual } from "./validation.js";
import type { Node, Taint } from "./types.js";

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

export function validateTaints(taints: Taint[] | null | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (taints ?? []).forEach((t, i) => {
    const p = `${path}[${i}]`;
    if (!t?.key) errs.push(field.required(`${p}.key`, ""));
    else errs.push(...validateQualifiedName(t.key, `${p}.key`));
    const valueErrs = isValidLabelValue(t?.value ?? "");
    if (valueErrs.length > 0) errs.push(field.invalid(`${p}.value`, t?.value ?? "", valueErrs.join(";")));
    errs.push(...validateEnum(t?.effect, `${p}.effect`, TAINT_EFFECTS));
    const key = `${t?.key ?? ""}\u0000${t?.effect ?? ""}`;
    if (seen.has(key)) errs.push({ ...field.duplicate(p, t), detail: "taints must be unique by key and effect pair" });
    seen.add(key);
  });
  return errs;
}

function validCIDR(cidr: string): boolean {
  const slash = cidr.indexOf("/");
  if (slash < 0) return false;
  const family = isIP(cidr.slice(0, slash));
  const bits = cidr.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

function validateNodeSpec(node: Node): FieldError[] {
  const spec = node.spec ?? {};
  const errs = validateTaints(spec.taints, "spec.taints");
  (spec.podCIDRs ?? []).forEach((cidr, i) => {
    if (!validCIDR(cidr)) errs.push(field.invalid(`spec.podCIDRs[${i}]`, cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"));
  });
  if ((spec.podCIDRs ?? []).length > 2) errs.push(field.invalid("spec.podCIDRs", spec.podCIDRs, "may specify no more than one CIDR for each IP family"));
  if (spec.podCIDR && (spec.podCIDRs ?? []).length > 0 && spec.podCIDRs![0] !== spec.podCIDR) {
    errs.push(field.invalid("spec.podCIDRs", spec.podCIDRs, "the first entry must match spec.podCIDR"));
  }
  return errs;
}

/** The node's role labels: `node-role.<domain>/<role>` keys and the older `<domain>/role` value. */
export function nodeRoles(node: Node, naming: Naming): string[] {
  const rolePrefix = `node-role.${naming.keyDomain}/`;
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith(rolePrefix) && key.length > rolePrefix.length) roles.add(key.slice(rolePrefix.length));
    else if (key === `${naming.keyDomain}/role` && value) roles.add(value);
  }
  return [...roles].sort();
}

const NODE_COLUMNS: readonly TableColumn[] = [
  NAME_COLUMN,
  { name: "Status", type: "string", description: "The status of the node", priority: 0 },
  { name: "Roles", type: "string", description: "The roles of the node", priority: 0 },
  AGE_COLUMN,
  { name: "Version", type: "string", description: "Version of the node agent (status.nodeInfo.kubeletVersion).", priority: 0 },
  { name: "Internal-IP", type: "string", description: "The node's InternalIP address.", priority: 1 },
  { name: "External-IP", type: "string", description: "The node's ExternalIP address.", priority: 1 },
  { name: "OS-Image", type: "string", description: "Operating system image of the node.", priority: 1 },
  { name: "Kernel-Version", type: "string", description: "Kernel version of the node.", priority: 1 },
  { name: "Container-Runtime", type: "string", description: "Container runtime and version of the node.", priority: 1 },
];

export function nodesResource(naming: Naming): ResourceDefinition {
  const address = (node: Node, type: string) => node.status?.addresses?.find((a) => a?.type === type)?.address || "<none>";
  return defineResource<Node>({
    group: "",
    versions: ["v1"],
    resource: "nodes",
    singular: "node",
    kind: "Node",
    namespaced: false,
    shortNames: ["no"],
    schema: `${CORE_V1}.Node`,
    subresources: [proxy("NodeProxyOptions"), status()],

    defaults(node) {
      const status = node.status;
      if (status && status.capacity && !status.allocatable) status.allocatable = structuredClone(status.capacity);
    },
    // Nodes may be created with their status (the agent registers that way).
    validate: validateNodeSpec,
    validateUpdate(node, old) {
      const errs = validateNodeSpec(node);
      const spec = node.spec ?? {};
      const oldSpec = old.spec ?? {};
      if ((oldSpec.podCIDRs ?? []).length > 0 && !jsonEqual(spec.podCIDRs, oldSpec.podCIDRs)) {
        errs.push(field.forbidden("spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid'));
      }
      if (oldSpec.providerID && spec.providerID !== oldSpec.providerID) {
        errs.push(field.forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'));
      }
      return errs;
    },

    table: {
      columns: NODE_COLUMNS,
      cells(node, now) {
        const ready = node.status?.conditions?.find((c) => c?.type === "Ready");
        const status = [ready === undefined ? "Unknown" : ready.status === "True" ? "Ready" : "NotReady"];
        if (node.spec?.unschedulable) status.push("SchedulingDisabled");
        const info = node.status?.nodeInfo ?? {};
        return [
          node.metadata.name ?? "",
          status.join(","),
          nodeRoles(node, naming).join(",") || "<none>",
          formatAge(node.metadata.creationTimestamp, now),
          info.kubeletVersion ?? "",
          address(node, "InternalIP"),
          address(node, "ExternalIP"),
          info.osImage || "<unknown>",
          info.kernelVersion || "<unknown>",
          info.containerRuntimeVersion || "<unknown>",
        ];
      },
    },
    fieldSelectors: {
      "spec.unschedulable": (n) => String(n.spec?.unschedulable === true),
    },
  });
}
