// The ResourceQuota admission plugin (upstream's plugin of that name, with
// its messages), last in the validating phase: a create in a namespace with
// quotas is charged to every quota that selects it and holds one of the
// resources it uses. Over a hard limit it is a 403
// (`exceeded quota: NAME, requested: pods=1, used: pods=2, limited: pods=2`);
// a quota the controller has not yet reported is a 403 too ("status unknown").
// The charge is written to the quota's status.used before the object is
// stored, through a compare-and-swap on the quota's resourceVersion that
// re-checks against the quota as it is now, so concurrent creates cannot
// both take the last unit. An object that then fails to store leaves the
// quota over-charged until the quota controller recounts (as upstream).
// Updates are charged too where upstream's evaluators handle them: services
// (a type change to NodePort or LoadBalancer takes node ports and load
// balancers) and persistent volume claims (a larger storage request); the
// charge is what grew, each resource's new usage less its old (never below
// zero), and an update that grows nothing is not checked at all. Pods are
// charged on create only (their resources do not change in place here), and
// other kinds' object counts on create only, as upstream.

import { forbidden, type ApiObject, type GroupResource } from "../../machinery/index.js";
import type { AdmissionAttributes, ValidatingPlugin } from "../../api/admission.js";
import type { ResourceDefinition, Subresource } from "../../api/resource.js";
import { findSubresource } from "../../api/resource.js";
import type { ResourceQuota } from "../../api/core/index.js";
import { add, canonical, cmp, formatQuantity, quantity, sub, ZERO, type Quantity } from "../../api/core/quantity-math.js";
import { objectUsage, quotaSelects, type Usage } from "../../api/core/resource-quotas-usage.js";

/**
 * What the plugin needs of the ResourceQuota store; the registry's store is
 * one. Declared here because the registry runs the admission chain, not the
 * other way round (as PriorityClassStore in ./priority.ts).
 */
export interface QuotaStore {
  readonly def: ResourceDefinition;
  list(namespace: string, params: {}): Promise<{ readonly items: readonly { readonly object: ApiObject }[] }>;
  modify(namespace: string, name: string, mutate: (current: ApiObject) => ApiObject, options: { subresource?: Subresource }): Promise<unknown>;
}

export function resourceQuotaAdmission(quotas: () => QuotaStore | undefined): ValidatingPlugin {
  return {
    name: "ResourceQuota",
    handles: (a) => (a.operation === "CREATE" || (a.operation === "UPDATE" && chargedOnUpdate(a.resource))) && a.subresource === undefined && a.namespace !== undefined && quotas() !== undefined,
    validate: (a) => admitQuota(a, quotas()!),
  };
}

/** upstream's evaluators that handle UPDATE: services (type changes) and claims (expansion). */
function chargedOnUpdate(gr: GroupResource): boolean {
  return gr.group === "" && (gr.resource === "services" || gr.resource === "persistentvolumeclaims");
}

/** What an update adds: for each resource of the new usage, new less old, never below zero (upstream's SubtractWithNonNegativeResult). */
export function growth(next: Usage, old: Usage): Usage {
  const out: Usage = new Map();
  for (const [k, v] of next) {
    const d = old.has(k) ? sub(v, old.get(k)!) : v;
    out.set(k, cmp(d, ZERO) > 0 ? d : ZERO);
  }
  return out;
}

/** The hard limits in effect: status.hard as the controller last reported it. */
function hardOf(rq: ResourceQuota): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(rq.status?.hard ?? {})) {
    const q = quantity(v);
    if (q !== undefined) out.set(k, q);
  }
  return out;
}

/** `a=1,b=2`, keys sorted (upstream's prettyPrint of a ResourceList). */
function pretty(values: ReadonlyMap<string, Quantity>): string {
  return [...values.keys()]
    .sort()
    .map((k) => `${k}=${formatQuantity(values.get(k)!)}`)
    .join(",");
}

/** The charge of `usage` to `rq`, or the refusal's message; undefined when the quota does not hold any of it. */
function charge(rq: ResourceQuota, gr: GroupResource, obj: ApiObject, usage: Usage): { used: Record<string, string> } | { error: string } | undefined {
  const specHard = Object.keys(rq.spec?.hard ?? {});
  const held = [...usage.keys()].filter((k) => specHard.includes(k));
  if (held.length === 0 || !quotaSelects(rq, gr, obj)) return undefined;
  const hard = hardOf(rq);
  const unknown = held.filter((k) => !hard.has(k) || rq.status?.used?.[k] === undefined);
  if (unknown.length > 0) return { error: `status unknown for quota: ${rq.metadata.name}, resources: ${unknown.sort().join(",")}` };
  const used = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(rq.status?.used ?? {})) used.set(k, quantity(v) ?? ZERO);
  const exceeded = held.filter((k) => cmp(add(used.get(k) ?? ZERO, usage.get(k)!), hard.get(k)!) > 0).sort();
  if (exceeded.length > 0) {
    const mask = (m: ReadonlyMap<string, Quantity>) => new Map(exceeded.map((k) => [k, m.get(k) ?? ZERO] as const));
    return { error: `exceeded quota: ${rq.metadata.name}, requested: ${pretty(mask(usage))}, used: ${pretty(mask(used))}, limited: ${pretty(mask(hard))}` };
  }
  const next: Record<string, string> = {};
  for (const [k, v] of Object.entries(rq.status?.used ?? {})) next[k] = canonical(v);
  for (const k of held) next[k] = formatQuantity(add(used.get(k) ?? ZERO, usage.get(k)!));
  return { used: next };
}

async function admitQuota(a: AdmissionAttributes, store: QuotaStore): Promise<void> {
  const namespace = a.namespace!;
  const obj = a.object!;
  const refuse = (message: string) => forbidden(a.resource, a.name, message);
  const quotas = (await store.list(namespace, {})).items.map((i) => i.object as ResourceQuota);
  if (quotas.length === 0) return;
  let usage = objectUsage(a.resource, obj);
  if (a.operation === "UPDATE" && a.oldObject !== undefined) {
    usage = growth(usage, objectUsage(a.resource, a.oldObject));
    if ([...usage.values()].every((q) => cmp(q, ZERO) === 0)) return;
  }
  // Check every quota first, so a refusal charges none of them.
  const charged: ResourceQuota[] = [];
  for (const rq of quotas) {
    const c = charge(rq, a.resource, obj, usage);
    if (c === undefined) continue;
    if ("error" in c) throw refuse(c.error);
    charged.push(rq);
  }
  if (a.dryRun) return;
  const status = findSubresource(store.def, "status");
  for (const rq of charged) {
    // Compare-and-swap on the quota: a concurrent charge makes the store retry this with the quota as it is now.
    await store.modify(namespace, rq.metadata.name!, (current) => {
      const c = charge(current as ResourceQuota, a.resource, obj, usage);
      if (c === undefined) return current;
      if ("error" in c) throw refuse(c.error);
      const next = current as ResourceQuota;
      next.status = { ...next.status, used: c.used };
      return next;
    }, status !== undefined ? { subresource: status } : {});
  }
}
