// resourcequotas (core/v1, short name `quota`, with status): the hard
// limits of a namespace's aggregate use. Upstream's validation messages
// (quantities at least 0, whole numbers for counted resources, known and
// non-conflicting scopes) and table (Name, Age, Request, Limit). Quota
// admission (src/apiserver/admission/resource-quota.ts) enforces them; the
// quota controller (src/controllers/resourcequota/) keeps status current.

import { field, type ApiObject, type FieldError } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { canonical, quantity } from "./quantity-math.js";
import { CORE_V1, listOf } from "./schemas.js";
import type { Quantities } from "./types.js";

export interface ScopedResourceSelectorRequirement {
  scopeName?: string;
  operator?: string;
  values?: string[] | null;
}

export interface ResourceQuotaSpec {
  hard?: Quantities | null;
  scopes?: string[] | null;
  scopeSelector?: { matchExpressions?: ScopedResourceSelectorRequirement[] | null } | null;
}

export interface ResourceQuota extends ApiObject {
  spec?: ResourceQuotaSpec;
  status?: { hard?: Quantities | null; used?: Quantities | null };
}

export const QUOTA_SCOPES = ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"];
const SCOPE_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"];

const quantities = () => s.map(s.quantity());
const coreRef = (name: string) => s.ref(`${CORE_V1}.${name}`);

export const RESOURCE_QUOTA_TYPES: readonly TypeDef[] = [
  type(`${CORE_V1}.ResourceQuota`, "Hard limits on the aggregate resources a namespace uses.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, coreRef("ResourceQuotaSpec"), "The hard limits."),
    status: f(3, coreRef("ResourceQuotaStatus"), "The enforced limits and current use; written by the system."),
  }),
  type(`${CORE_V1}.ResourceQuotaSpec`, "The hard limits of a ResourceQuota and which objects they count.", {
    hard: f(1, quantities(), "The most the namespace may use, by resource name."),
    scopes: f(2, s.array(s.string(), { listType: "atomic" }), "Only objects matching every scope are counted."),
    scopeSelector: f(3, coreRef("ScopeSelector"), "Scopes as match expressions; only matching objects are counted."),
  }),
  type(`${CORE_V1}.ResourceQuotaStatus`, "What a ResourceQuota enforces and what is used now.", {
    hard: f(1, quantities(), "The limits enforced."),
    used: f(2, quantities(), "What the namespace uses now."),
  }),
  type(`${CORE_V1}.ScopeSelector`, "Quota scopes as match expressions.", {
    matchExpressions: f(1, s.array(coreRef("ScopedResourceSelectorRequirement"), { listType: "atomic" }), "All must match."),
  }),
  type(`${CORE_V1}.ScopedResourceSelectorRequirement`, "One scope expression.", {
    scopeName: f(1, s.string(), "The scope.", { required: true }),
    operator: f(2, s.string(), "In, NotIn, Exists or DoesNotExist.", { required: true }),
    values: f(3, s.array(s.string(), { listType: "atomic" }), "Values for In and NotIn."),
  }),
  listOf(CORE_V1, "ResourceQuota", "A list of ResourceQuotas."),
];

/** Resources counted in whole objects (upstream's IsIntegerResourceName). */
export function isCountedResource(name: string): boolean {
  return name.startsWith("count/") || ["pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"].includes(name);
}

/** upstream's standard quota resource names (scopes are checked against these only). */
const STANDARD_QUOTA_RESOURCES = new Set([
  "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
  "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
]);
const POD_COMPUTE = new Set(["cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"]);

/** upstream's IsResourceQuotaScopeValidForResource: pod scopes limit pods and their compute; BestEffort only the pod count. */
function scopeValidFor(scope: string, name: string): boolean {
  if (scope === "BestEffort") return name === "pods";
  if (["Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"].includes(scope)) return name === "pods" || POD_COMPUTE.has(name);
  return true;
}

function validateQuantities(values: Quantities | null | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(values ?? {})) {
    const q = quantity(v);
    if (q === undefined) continue; // the schema's quantity check reports it
    if (q.milli < 0n) errs.push(field.invalid(`${path}[${k}]`, canonical(v), "must be greater than or equal to 0"));
    else if (isCountedResource(k) && q.milli % 1000n !== 0n) errs.push(field.invalid(`${path}[${k}]`, canonical(v), "must be an integer"));
  }
  return errs;
}

/** upstream's ValidateResourceQuotaSpec and ValidateResourceQuotaStatus. */
export function validateResourceQuota(rq: ResourceQuota): FieldError[] {
  const spec = rq.spec ?? {};
  const errs = validateQuantities(spec.hard, "spec.hard");
  const scopes = spec.scopes ?? [];
  for (const scope of scopes) {
    if (!QUOTA_SCOPES.includes(scope)) errs.push(field.invalid("spec.scopes", scopes, "unsupported scope"));
    for (const name of Object.keys(spec.hard ?? {}).sort()) {
      if (STANDARD_QUOTA_RESOURCES.has(name) && !scopeValidFor(scope, name)) errs.push(field.invalid("spec.scopes", scopes, "unsupported scope applied to resource"));
    }
  }
  for (const [a, b] of [["BestEffort", "NotBestEffort"], ["Terminating", "NotTerminating"]]) {
    if (scopes.includes(a!) && scopes.includes(b!)) errs.push(field.invalid("spec.scopes", scopes, "conflicting scopes"));
  }
  (spec.scopeSelector?.matchExpressions ?? []).forEach((req, i) => {
    const at = `spec.scopeSelector.matchExpressions[${i}]`;
    if (!QUOTA_SCOPES.includes(req.scopeName ?? "")) errs.push(field.invalid(`${at}.scopeName`, req.scopeName ?? "", "unsupported scope"));
    if (!SCOPE_OPERATORS.includes(req.operator ?? "")) errs.push(field.invalid(`${at}.operator`, req.operator ?? "", "not a valid selector operator"));
    const values = req.values ?? [];
    if ((req.operator === "In" || req.operator === "NotIn") && values.length === 0) errs.push(field.required(`${at}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    if ((req.operator === "Exists" || req.operator === "DoesNotExist") && values.length > 0) errs.push(field.invalid(`${at}.values`, values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
  });
  return [...errs, ...validateQuantities(rq.status?.hard, "status.hard"), ...validateQuantities(rq.status?.used, "status.used")];
}

/** `name: used/hard, ...` over status.hard, sorted, split into the request and limit columns (upstream's printResourceQuota). */
function quotaCells(rq: ResourceQuota): [string, string] {
  const hard = rq.status?.hard ?? {};
  const used = rq.status?.used ?? {};
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const cell = `${name}: ${canonical(used[name] ?? 0)}/${canonical(hard[name])}`;
    const pieces = name.split(".");
    (pieces.length > 1 && pieces[0] === "limits" ? limit : request).push(cell);
  }
  return [request.join(", "), limit.join(", ")];
}

export function resourceQuotasResource(): ResourceDefinition {
  return defineResource<ResourceQuota>({
    group: "",
    versions: ["v1"],
    resource: "resourcequotas",
    singular: "resourcequota",
    kind: "ResourceQuota",
    namespaced: true,
    shortNames: ["quota"],
    schema: `${CORE_V1}.ResourceQuota`,
    subresources: [status({ validate: validateResourceQuota })],
    prepareForCreate(rq) {
      rq.status = {};
    },
    validate: validateResourceQuota,
    validateUpdate: validateResourceQuota,
    // Name, Age, then Request and Limit (upstream's column order).
    table: nameAgeTable<ResourceQuota>(
      { columns: [], cells: () => [] },
      {
        columns: [
          { name: "Request", type: "string", description: "Request represents a minimum amount of cpu/memory that a container may consume.", priority: 0 },
          { name: "Limit", type: "string", description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", priority: 0 },
        ],
        cells: quotaCells,
      },
    ),
  });
}
