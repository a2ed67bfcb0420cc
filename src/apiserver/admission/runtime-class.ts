// RuntimeClass, as upstream's admission plugin of that name, on pod creation:
// - mutating: a pod naming a RuntimeClass gets the class's overhead
//   (spec.overhead) and scheduling (nodeSelector merged, a conflicting key
//   refused; tolerations merged as upstream's MergeTolerations);
// - validating: the pod's overhead must equal its class's, and a pod without
//   a class overhead may not set one.
// A class that does not exist refuses the pod (403), as upstream.

import type { MutatingPlugin, ValidatingPlugin } from "../../api/admission.js";
import type { Pod, Quantities, Toleration } from "../../api/core/index.js";
import { parseQuantity } from "../../api/core/quantity.js";
import type { RuntimeClass } from "../../api/node/index.js";
import { forbidden, isApiError, type ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";

/** What the plugin needs of the RuntimeClass store (the registry's store is one). */
export interface RuntimeClassLookup {
  get(namespace: undefined, name: string): Promise<{ readonly object: ApiObject }>;
}

const PODS = { group: "", resource: "pods" };
const OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
const isPodCreate = (a: { operation: string; resource: { group: string; resource: string }; subresource?: string | undefined }) =>
  a.operation === "CREATE" && a.resource.group === "" && a.resource.resource === "pods" && a.subresource === undefined;

async function classOf(pod: Pod, name: string | undefined, classes: () => RuntimeClassLookup | undefined): Promise<RuntimeClass | undefined> {
  const className = pod.spec?.["runtimeClassName"] as string | null | undefined;
  const store = classes();
  if (className == null || className === "" || store === undefined) return undefined;
  try {
    return (await store.get(undefined, className)).object as RuntimeClass;
  } catch (err) {
    if (isApiError(err, "NotFound")) throw forbidden(PODS, name ?? "", `pod rejected: RuntimeClass "${className}" not found`);
    throw err;
  }
}

/** Equal resource lists, quantities compared by value ("100m" is "0.1"), as upstream's semantic equality. */
function sameQuantities(a: Quantities | null | undefined, b: Quantities | null | undefined): boolean {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && parseQuantity(a![k]) === parseQuantity(b![k]));
}

const sameToleration = (a: Toleration, b: Toleration) =>
  (a.key ?? "") === (b.key ?? "") && (a.operator ?? "") === (b.operator ?? "") && (a.value ?? "") === (b.value ?? "") && (a.effect ?? "") === (b.effect ?? "") && (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null);

/** Whether toleration `ss` tolerates everything `t` does (upstream's isSuperset). */
function covers(ss: Toleration, t: Toleration): boolean {
  if (sameToleration(ss, t)) return true;
  if ((t.key ?? "") !== (ss.key ?? "") && ((ss.key ?? "") !== "" || ss.operator !== "Exists")) return false;
  if ((t.effect ?? "") !== (ss.effect ?? "") && (ss.effect ?? "") !== "") return false;
  if (ss.effect === "NoExecute" && ss.tolerationSeconds != null && (t.tolerationSeconds == null || t.tolerationSeconds > ss.tolerationSeconds)) return false;
  if (ss.operator === "Equal" || !ss.operator) return t.operator === "Equal" && (t.value ?? "") === (ss.value ?? "");
  return ss.operator === "Exists";
}

/** The pod's tolerations then the class's, leaving out each one another already covers (upstream's MergeTolerations). */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => covers(kept, t))) return;
    if (all.slice(i + 1).some((later) => !sameToleration(t, later) && covers(later, t))) return;
    merged.push(t);
  });
  return merged;
}

export function runtimeClassAdmission(_naming: Naming, classes: () => RuntimeClassLookup | undefined): { mutating: MutatingPlugin; validating: ValidatingPlugin } {
  return {
    mutating: {
      name: "RuntimeClass",
      handles: isPodCreate,
      async admit(a) {
        const pod = a.object as Pod;
        const rc = await classOf(pod, a.name, classes);
        if (rc === undefined) return;
        const spec = (pod.spec ??= {});
        const fixed = rc.overhead?.podFixed;
        if (fixed != null) {
          if (spec.overhead != null && !sameQuantities(spec.overhead, fixed)) throw forbidden(PODS, a.name, OVERHEAD_MISMATCH);
          spec.overhead = { ...fixed };
        }
        const sched = rc.scheduling;
        if (sched == null) return;
        const selector = { ...(spec.nodeSelector ?? {}) };
        for (const [key, value] of Object.entries(sched.nodeSelector ?? {})) {
          const podValue = selector[key];
          if (podValue !== undefined && podValue !== value) {
            throw forbidden(PODS, a.name, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`);
          }
          selector[key] = value;
        }
        if (Object.keys(selector).length > 0) spec.nodeSelector = selector;
        const tolerations = mergeTolerations(spec.tolerations ?? [], sched.tolerations ?? []);
        if (tolerations.length > 0) spec.tolerations = tolerations;
      },
    },
    validating: {
      name: "RuntimeClass",
      handles: isPodCreate,
      async validate(a) {
        const pod = a.object as Pod;
        const rc = await classOf(pod, a.name, classes);
        const fixed = rc?.overhead?.podFixed;
        if (fixed != null) {
          if (!sameQuantities(fixed, pod.spec?.overhead)) throw forbidden(PODS, a.name, OVERHEAD_MISMATCH);
        } else if (pod.spec?.overhead != null) {
          throw forbidden(PODS, a.name, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
        }
      },
    },
  };
}
