// The LimitRanger admission plugin (upstream's plugin of that name, with its
// messages): on pod creates, the namespace's LimitRanges give containers the
// default requests and limits they lack (mutating phase, recorded in the
// `<key domain>/limit-ranger` annotation), then bound what each container and
// the pod as a whole asks for (validating phase): min, max and
// maxLimitRequestRatio. Pod updates are not looked at (containers' resources
// cannot change). A refusal is a 403 naming every broken bound.
// PersistentVolumeClaim items are stored but not enforced here: that kind is
// not served by this tree yet.

import { forbidden } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { AdmissionAttributes, MutatingPlugin, ValidatingPlugin } from "../../api/admission.js";
import type { Container, Pod, Quantities } from "../../api/core/types.js";
import type { LimitRange, LimitRangeItem } from "../../api/core/index.js";
import { cmp, formatQuantity, fromMilli, quantity, type Quantity } from "../../api/core/quantity-math.js";

/** The namespace's LimitRanges (the registry's store answers). */
export type LimitRangeLister = (namespace: string) => Promise<readonly LimitRange[]>;

const PODS = { group: "", resource: "pods" };

function handlesPodCreate(a: AdmissionAttributes): boolean {
  return a.operation === "CREATE" && a.subresource === undefined && a.resource.group === "" && a.resource.resource === "pods" && a.namespace !== undefined;
}

export function limitRanger(list: LimitRangeLister, naming: Naming): { mutating: MutatingPlugin; validating: ValidatingPlugin } {
  return {
    mutating: {
      name: "LimitRanger",
      handles: handlesPodCreate,
      async admit(a) {
        for (const lr of await list(a.namespace!)) applyDefaults(a.object as Pod, lr, `${naming.keyDomain}/limit-ranger`);
      },
    },
    validating: {
      name: "LimitRanger",
      handles: handlesPodCreate,
      async validate(a) {
        for (const lr of await list(a.namespace!)) {
          const errs = podLimitErrors(a.object as Pod, lr);
          if (errs.length > 0) throw forbidden(PODS, a.name, aggregate(errs));
        }
      },
    },
  };
}

/** upstream's utilerrors aggregate text: one message bare, several as `[a, b]`, repeats dropped. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(", ")}]`;
}

/** upstream's mergePodResourceRequirements: the Container items' defaults, what each container set recorded. */
export function applyDefaults(pod: Pod, lr: LimitRange, annotation: string): void {
  const requests: Quantities = {};
  const limits: Quantities = {};
  for (const item of lr.spec?.limits ?? []) {
    if (item.type !== "Container") continue;
    Object.assign(requests, item.defaultRequest ?? {});
    Object.assign(limits, item.default ?? {});
  }
  const notes: string[] = [];
  const merge = (c: Container, what: string) => {
    const res = (c.resources ??= {});
    const setLimits = fill((res.limits ??= {}), limits);
    const setRequests = fill((res.requests ??= {}), requests);
    if (setRequests.length > 0) notes.push(`${setRequests.sort().join(", ")} request for ${what} ${c.name ?? ""}`);
    if (setLimits.length > 0) notes.push(`${setLimits.sort().join(", ")} limit for ${what} ${c.name ?? ""}`);
  };
  for (const c of pod.spec?.containers ?? []) merge(c, "container");
  for (const c of pod.spec?.initContainers ?? []) merge(c, "init container");
  if (notes.length > 0) (pod.metadata.annotations ??= {})[annotation] = `LimitRanger plugin set: ${notes.join("; ")}`;
}

function fill(target: Quantities, defaults: Quantities): string[] {
  const set: string[] = [];
  for (const [k, v] of Object.entries(defaults)) {
    if (k in target) continue;
    target[k] = v;
    set.push(k);
  }
  return set;
}

type List = ReadonlyMap<string, Quantity>;

function parsed(values: Quantities | null | undefined): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(values ?? {})) {
    const q = quantity(v);
    if (q !== undefined) out.set(k, q);
  }
  return out;
}

const sorted = (values: Quantities | null | undefined) => [...parsed(values)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function minConstraint(type: string, name: string, enforced: Quantity, req: List, lim: List): string | undefined {
  const r = req.get(name);
  const l = lim.get(name);
  const e = formatQuantity(enforced);
  if (r === undefined) return `minimum ${name} usage per ${type} is ${e}.  No request is specified`;
  if (cmp(r, enforced) < 0) return `minimum ${name} usage per ${type} is ${e}, but request is ${formatQuantity(r)}`;
  if (l !== undefined && cmp(l, enforced) < 0) return `minimum ${name} usage per ${type} is ${e}, but limit is ${formatQuantity(l)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, req: List, lim: List): string | undefined {
  const r = req.get(name);
  const l = lim.get(name);
  const e = formatQuantity(enforced);
  if (l === undefined) return `maximum ${name} usage per ${type} is ${e}.  No limit is specified`;
  if (cmp(l, enforced) > 0) return `maximum ${name} usage per ${type} is ${e}, but limit is ${formatQuantity(l)}`;
  if (r !== undefined && cmp(r, enforced) > 0) return `maximum ${name} usage per ${type} is ${e}, but request is ${formatQuantity(r)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, req: List, lim: List): string | undefined {
  const r = req.get(name);
  const l = lim.get(name);
  const e = formatQuantity(enforced);
  if (r === undefined || r.milli === 0n) return `${name} max limit to request ratio per ${type} is ${e}, but no request is specified or request is 0`;
  if (l === undefined || l.milli === 0n) return `${name} max limit to request ratio per ${type} is ${e}, but no limit is specified or limit is 0`;
  const observed = Number(l.milli) / Number(r.milli);
  // Go's %f: six decimals.
  if (observed * 1000 > Number(enforced.milli)) return `${name} max limit to request ratio per ${type} is ${e}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

/** upstream's sum: only resources every container sets; cpu in milli-units, the rest rounded up to whole units. */
function sum(lists: readonly List[]): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  const keys = new Set(lists.flatMap((l) => [...l.keys()]));
  for (const k of keys) {
    if (!lists.every((l) => l.has(k))) continue;
    let total = 0n;
    for (const l of lists) {
      const m = l.get(k)!.milli;
      total += k === "cpu" ? m : ((m + 999n) / 1000n) * 1000n;
    }
    out.set(k, fromMilli(total));
  }
  return out;
}

function check(type: string, item: LimitRangeItem, req: List, lim: List, errs: string[]): void {
  for (const [k, v] of sorted(item.min)) {
    const e = minConstraint(type, k, v, req, lim);
    if (e) errs.push(e);
  }
  for (const [k, v] of sorted(item.max)) {
    const e = maxConstraint(type, k, v, req, lim);
    if (e) errs.push(e);
  }
  for (const [k, v] of sorted(item.maxLimitRequestRatio)) {
    const e = ratioConstraint(type, k, v, req, lim);
    if (e) errs.push(e);
  }
}

/** upstream's PodValidateLimitFunc: Container items per container (init containers too), Pod items over the pod's effective totals. */
export function podLimitErrors(pod: Pod, lr: LimitRange): string[] {
  const errs: string[] = [];
  const containers = pod.spec?.containers ?? [];
  const inits = pod.spec?.initContainers ?? [];
  for (const item of lr.spec?.limits ?? []) {
    if (item.type === "Container") {
      for (const c of [...containers, ...inits]) check("Container", item, parsed(c.resources?.requests), parsed(c.resources?.limits), errs);
    } else if (item.type === "Pod") {
      const requests = sum(containers.map((c) => parsed(c.resources?.requests)));
      const limits = sum(containers.map((c) => parsed(c.resources?.limits)));
      // An init container runs alone: the pod needs the larger of it and the containers' sum.
      for (const c of inits) {
        for (const [k, v] of parsed(c.resources?.requests)) if (!requests.has(k) || cmp(v, requests.get(k)!) > 0) requests.set(k, v);
        for (const [k, v] of parsed(c.resources?.limits)) if (!limits.has(k) || cmp(v, limits.get(k)!) > 0) limits.set(k, v);
      }
      check("Pod", item, requests, limits, errs);
    }
  }
  return errs;
}

