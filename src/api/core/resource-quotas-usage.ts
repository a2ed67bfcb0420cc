// What one object uses of a namespace's quota (upstream's quota evaluators),
// shared by quota admission (the API server) and the quota controller (the
// controller manager), which cannot import each other. Pods: pods, count/pods,
// requests.* / limits.* (cpu, memory, ephemeral-storage, hugepages, extended)
// of the pod's effective requests (the containers' sum, or a larger init
// container); terminal pods count only as count/pods. Services: services,
// services.nodeports, services.loadbalancers. Everything else: its object
// count, `count/<resource>[.<group>]`, and the core names (configmaps, secrets, ...).
// Scopes (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass) select pods only.

import type { ApiObject, GroupResource } from "../../machinery/index.js";
import { isPodTerminal } from "./pod-phase.js";
import { podQOSClass } from "./pods.js";
import { add, cmp, quantity, type Quantity } from "./quantity-math.js";
import type { ResourceQuota, ScopedResourceSelectorRequirement } from "./resource-quotas.js";
import type { Pod, Quantities, Service } from "./types.js";

export type Usage = Map<string, Quantity>;

const ONE: Quantity = { milli: 1000n, binary: false };
/** The core resources whose plain names quotas count (upstream's legacy object counts). */
const COUNTED_BY_NAME = new Set(["pods", "services", "configmaps", "secrets", "replicationcontrollers", "resourcequotas", "persistentvolumeclaims"]);

/** `count/pods`, `count/deployments.apps`. */
export function countName(gr: GroupResource): string {
  return gr.group === "" ? `count/${gr.resource}` : `count/${gr.resource}.${gr.group}`;
}

/** Where the usage of a quota resource name comes from (the controller lists that resource): undefined when nothing served counts toward it. */
export function sourceOf(name: string): GroupResource | undefined {
  if (name.startsWith("count/")) {
    const rest = name.slice("count/".length);
    const dot = rest.indexOf(".");
    return dot < 0 ? { group: "", resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
  }
  if (name.startsWith("services.")) return { group: "", resource: "services" };
  if (COUNTED_BY_NAME.has(name)) return { group: "", resource: name };
  if (name === "requests.storage" || name.endsWith(".storageclass.storage.k8s.io/requests.storage")) return { group: "", resource: "persistentvolumeclaims" };
  if (name.startsWith("requests.") || name.startsWith("limits.") || ["cpu", "memory", "ephemeral-storage"].includes(name) || name.startsWith("hugepages-")) return { group: "", resource: "pods" };
  return undefined;
}

function parsed(values: Quantities | null | undefined): Usage {
  const out: Usage = new Map();
  for (const [k, v] of Object.entries(values ?? {})) {
    const q = quantity(v);
    if (q !== undefined) out.set(k, q);
  }
  return out;
}

function addInto(into: Usage, more: Usage): void {
  for (const [k, v] of more) into.set(k, into.has(k) ? add(into.get(k)!, v) : v);
}

function maxInto(into: Usage, more: Usage): void {
  for (const [k, v] of more) if (!into.has(k) || cmp(v, into.get(k)!) > 0) into.set(k, v);
}

/** upstream's QuotaV1Pod: a terminal pod, or one past its deletion grace period, no longer uses compute quota. */
export function podCountsForCompute(pod: Pod, now: number = Date.now()): boolean {
  if (isPodTerminal(pod)) return false;
  const meta = pod.metadata;
  if (meta.deletionTimestamp && meta.deletionGracePeriodSeconds != null) {
    if (now > Date.parse(meta.deletionTimestamp) + meta.deletionGracePeriodSeconds * 1000) return false;
  }
  return true;
}

function podUsage(pod: Pod, now: number): Usage {
  const usage: Usage = new Map([["count/pods", ONE]]);
  if (!podCountsForCompute(pod, now)) return usage;
  const requests: Usage = new Map();
  const limits: Usage = new Map();
  for (const c of pod.spec?.containers ?? []) {
    addInto(requests, parsed(c.resources?.requests));
    addInto(limits, parsed(c.resources?.limits));
  }
  for (const c of pod.spec?.initContainers ?? []) {
    maxInto(requests, parsed(c.resources?.requests));
    maxInto(limits, parsed(c.resources?.limits));
  }
  addInto(requests, parsed((pod.spec as { overhead?: Quantities } | undefined)?.overhead));
  addInto(limits, parsed((pod.spec as { overhead?: Quantities } | undefined)?.overhead));
  usage.set("pods", ONE);
  for (const name of ["cpu", "memory", "ephemeral-storage"]) {
    const r = requests.get(name);
    if (r !== undefined) usage.set(name, r).set(`requests.${name}`, r);
    const l = limits.get(name);
    if (l !== undefined) usage.set(`limits.${name}`, l);
  }
  for (const [name, r] of requests) {
    if (name.startsWith("hugepages-")) usage.set(name, r).set(`requests.${name}`, r);
    else if (name.includes("/") && !name.startsWith("kubernetes.io/")) usage.set(`requests.${name}`, r);
  }
  return usage;
}

function serviceUsage(svc: Service): Usage {
  const usage: Usage = new Map([["services", ONE], ["count/services", ONE]]);
  const type = svc.spec?.type;
  const ports = BigInt((svc.spec?.ports ?? []).length) * 1000n;
  if (type === "NodePort" || type === "LoadBalancer") usage.set("services.nodeports", { milli: ports, binary: false });
  if (type === "LoadBalancer") usage.set("services.loadbalancers", ONE);
  return usage;
}

/** What `obj` of resource `gr` uses of quota, by resource name (names no quota holds included). */
export function objectUsage(gr: GroupResource, obj: ApiObject, now: number = Date.now()): Usage {
  if (gr.group === "" && gr.resource === "pods") return podUsage(obj as Pod, now);
  if (gr.group === "" && gr.resource === "services") return serviceUsage(obj as Service);
  const usage: Usage = new Map([[countName(gr), ONE]]);
  if (gr.group === "" && COUNTED_BY_NAME.has(gr.resource)) usage.set(gr.resource, ONE);
  if (gr.group === "" && gr.resource === "persistentvolumeclaims") {
    const storage = quantity((obj as { spec?: { resources?: { requests?: Quantities } } }).spec?.resources?.requests?.["storage"]);
    if (storage !== undefined) usage.set("requests.storage", storage);
  }
  return usage;
}

function scopeMatches(scope: string, pod: Pod, operator = "Exists", values: readonly string[] = []): boolean {
  const spec = pod.spec ?? {};
  switch (scope) {
    case "Terminating":
      return spec.activeDeadlineSeconds != null && spec.activeDeadlineSeconds >= 0;
    case "NotTerminating":
      return !(spec.activeDeadlineSeconds != null && spec.activeDeadlineSeconds >= 0);
    case "BestEffort":
      return podQOSClass(spec) === "BestEffort";
    case "NotBestEffort":
      return podQOSClass(spec) !== "BestEffort";
    case "PriorityClass": {
      const name = spec.priorityClassName ?? "";
      if (operator === "Exists") return name !== "";
      if (operator === "DoesNotExist") return name === "";
      if (operator === "In") return name !== "" && values.includes(name);
      if (operator === "NotIn") return name === "" || !values.includes(name);
      return false;
    }
    case "CrossNamespacePodAffinity":
      return false;
    default:
      return false;
  }
}

/** Whether the quota counts `obj` at all: an unscoped quota counts everything; scopes select pods only. */
export function quotaSelects(rq: ResourceQuota, gr: GroupResource, obj: ApiObject): boolean {
  const scopes: ScopedResourceSelectorRequirement[] = [
    ...(rq.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: "Exists" })),
    ...(rq.spec?.scopeSelector?.matchExpressions ?? []),
  ];
  if (scopes.length === 0) return true;
  if (gr.group !== "" || gr.resource !== "pods") return false;
  return scopes.every((s) => scopeMatches(s.scopeName ?? "", obj as Pod, s.operator, s.values ?? []));
}
