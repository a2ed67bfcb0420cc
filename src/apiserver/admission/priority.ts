// Pod priority admission (upstream's Priority plugin): on pod create,
// spec.priorityClassName resolves to spec.priority and spec.preemptionPolicy
// from the PriorityClass (the built-in system classes always exist); without a
// name, the globalDefault class applies, else priority 0. A mutating plugin of
// the admission chain, for pod creates.

import { SYSTEM_PRIORITY_CLASSES, type PriorityClass } from "../../api/scheduling/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { Pod } from "../../api/core/types.js";
import { forbidden, isApiError, type ApiObject } from "../../machinery/index.js";
import type { MutatingPlugin } from "../../api/admission.js";

const PODS = { group: "", resource: "pods" };

/**
 * What the plugin needs of the PriorityClass store; the registry's store is one. Declared here
 * rather than imported because the registry runs the admission chain, not the other way round.
 */
export interface PriorityClassStore {
  get(namespace: undefined, name: string): Promise<{ readonly object: ApiObject }>;
  list(namespace: undefined, params: {}): Promise<{ readonly items: readonly { readonly object: ApiObject }[] }>;
  create(namespace: undefined, obj: ApiObject): Promise<unknown>;
}

export function priorityAdmission(classes: () => PriorityClassStore | undefined): MutatingPlugin {
  return {
    name: "Priority",
    handles: (a) => a.operation === "CREATE" && a.resource.group === "" && a.resource.resource === "pods" && a.subresource === undefined,
    admit: (a) => admitPriority(a.object as Pod, classes()),
  };
}

async function admitPriority(pod: Pod, store: PriorityClassStore | undefined): Promise<void> {
  const spec = (pod.spec ??= {});
  let cls: { name: string; value: number; preemptionPolicy: string } | undefined;
  if (spec.priorityClassName) {
    cls = await lookup(store, spec.priorityClassName);
    if (cls === undefined) throw forbidden(PODS, pod.metadata?.name ?? "", `no PriorityClass with name ${spec.priorityClassName} was found`);
  } else if (store !== undefined) {
    const all = (await store.list(undefined, {})).items.map((c) => c.object as PriorityClass);
    const def = all.filter((c) => c.globalDefault).sort((a, b) => (a.value ?? 0) - (b.value ?? 0))[0];
    if (def !== undefined) cls = asClass(def);
  }
  const priority = cls?.value ?? 0;
  if (spec.priority != null && spec.priority !== priority) {
    throw forbidden(
      PODS,
      pod.metadata?.name ?? "",
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  }
  spec.priority = priority;
  if (cls === undefined) return;
  spec.priorityClassName = cls.name;
  if (spec.preemptionPolicy != null && spec.preemptionPolicy !== cls.preemptionPolicy) {
    throw forbidden(
      PODS,
      pod.metadata?.name ?? "",
      `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${cls.preemptionPolicy} from the given PriorityClass name`,
    );
  }
  spec.preemptionPolicy = cls.preemptionPolicy;
}

async function lookup(store: PriorityClassStore | undefined, name: string): Promise<{ name: string; value: number; preemptionPolicy: string } | undefined> {
  if (store !== undefined) {
    try {
      return asClass((await store.get(undefined, name)).object as PriorityClass);
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
    }
  }
  const system = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  return system && { name, value: system.value, preemptionPolicy: "PreemptLowerPriority" };
}

function asClass(pc: PriorityClass): { name: string; value: number; preemptionPolicy: string } {
  return { name: pc.metadata.name ?? "", value: pc.value ?? 0, preemptionPolicy: pc.preemptionPolicy ?? "PreemptLowerPriority" };
}

/** Creates the built-in system classes when missing (upstream's scheduling post-start hook). */
export async function ensureSystemPriorityClasses(store: PriorityClassStore | undefined, naming: Naming): Promise<void> {
  if (store === undefined) return;
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    try {
      await store.create(undefined, { apiVersion: `${naming.schedulingGroup}/v1`, kind: "PriorityClass", metadata: { name: c.name }, value: c.value, description: c.description } as ApiObject);
    } catch (err) {
      if (!isApiError(err, "AlreadyExists")) throw err;
    }
  }
}
