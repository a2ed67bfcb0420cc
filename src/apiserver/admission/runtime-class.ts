// RuntimeClass, as upstream's admission plugin of that name, on pod creation:
// - mutating: a pod naming a RuntimeClass gets the class's overhead
//   (spec.overhead) and scheduling (nodeSelector merged, a conflicting key
//   refused; tolerations added unless the pod has an identical one);
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
  (a.key ?? "") === (b.key ?? "") && (a.operator ?? "Equal") === (b.operator ?? "Equal") && (a.value ?? "") === (b.value ?? "") && (a.effect ?? "") === (b.effect ?? "") && (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null);

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
        const tolerations = [...(spec.tolerations ?? [])];
        for (const t of sched.tolerations ?? []) if (!tolerations.some((have) => sameToleration(have, t))) tolerations.push(t);
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
