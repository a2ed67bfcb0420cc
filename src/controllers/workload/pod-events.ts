// Owner and pod events → owner keys (upstream's addPod/updatePod/deletePod,
// shared by the ReplicaSet, DaemonSet and StatefulSet controllers): a pod's
// controller is queued and its expectations told; an orphan queues every
// owner in its namespace whose selector matches, so it can be adopted.

import { isDeepStrictEqual } from "node:util";
import { NAMESPACE_INDEX, keyOf, type Informer, type WorkQueue } from "../../client/index.js";
import type { ApiObject, LabelSelector, Selector } from "../../machinery/index.js";
import type { Expectations } from "./expectations.js";
import { isPodReady, type Pod } from "./pods.js";
import { controllerOf, selectorOf } from "./resources.js";

/** Owner events → its key; a deleted owner's expectations are dropped. */
function watchOwners<T extends ApiObject>(owners: Informer<T>, queue: WorkQueue, expectations?: Expectations): void {
  const enqueue = (owner: T) => queue.add(keyOf(owner));
  owners.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, owner) => enqueue(owner),
    onDelete: (owner) => {
      expectations?.delete(keyOf(owner));
      enqueue(owner);
    },
  });
}

interface OwnedPodEventsOptions<T extends ApiObject> {
  /** The owner kind this controller manages ("ReplicaSet"). */
  kind: string;
  owners: Informer<T>;
  selectorOf(owner: T): Selector;
  queue: WorkQueue;
  expectations: Expectations;
  minReadySecondsOf?(owner: T): number;
}

function watchOwnedPods<T extends ApiObject>(pods: Informer<Pod>, o: OwnedPodEventsOptions<T>): void {
  const resolve = (pod: Pod, ref = controllerOf(pod)): string | undefined => {
    if (ref === undefined || ref.kind !== o.kind) return undefined;
    const key = `${pod.metadata.namespace}/${ref.name}`;
    return o.owners.get(key)?.metadata.uid === ref.uid ? key : undefined;
  };
  const orphanOwners = (pod: Pod) => {
    const labels = pod.metadata.labels ?? {};
    for (const owner of o.owners.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? "")) {
      if (o.selectorOf(owner).matches(labels)) o.queue.add(keyOf(owner));
    }
  };
  const deleted = (pod: Pod) => {
    const key = resolve(pod);
    if (key === undefined) return;
    o.expectations.deletionObserved(key, keyOf(pod));
    o.queue.add(key);
  };
  pods.addEventHandler({
    onAdd: (pod) => {
      if (pod.metadata.deletionTimestamp) return deleted(pod);
      if (controllerOf(pod) === undefined) return orphanOwners(pod);
      const key = resolve(pod);
      if (key === undefined) return;
      o.expectations.creationObserved(key);
      o.queue.add(key);
    },
    onUpdate: (old, pod) => {
      const labelsChanged = !isDeepStrictEqual(old.metadata.labels ?? {}, pod.metadata.labels ?? {});
      if (pod.metadata.deletionTimestamp) {
        deleted(pod);
        if (labelsChanged) deleted(old);
        return;
      }
      const oldRef = controllerOf(old), ref = controllerOf(pod);
      const refChanged = !isDeepStrictEqual(oldRef, ref);
      if (refChanged && oldRef !== undefined) {
        const oldKey = resolve(old, oldRef);
        if (oldKey !== undefined) o.queue.add(oldKey);
      }
      if (ref !== undefined) {
        const key = resolve(pod, ref);
        if (key === undefined) return;
        o.queue.add(key);
        const minReady = o.minReadySecondsOf?.(o.owners.get(key)!) ?? 0;
        // Available only minReadySeconds after Ready, and no event says so: look again then.
        if (minReady > 0 && !isPodReady(old) && isPodReady(pod)) o.queue.addAfter(key, minReady * 1000 + 1000);
        return;
      }
      if (labelsChanged || refChanged) orphanOwners(pod);
    },
    onDelete: deleted,
  });
}

/** An owner of pods by selector, with upstream's minReadySeconds (ReplicaSet, DaemonSet, StatefulSet). */
export type PodOwner = ApiObject & { spec?: { selector?: LabelSelector | null; minReadySeconds?: number | null } };

/**
 * What a controller of pods watches: its owners' events and their pods'
 * events, both feeding the owner's key, with the owner's selector and
 * minReadySeconds read from its spec.
 */
export function watchOwnersAndPods<T extends ApiObject & { spec?: { minReadySeconds?: number | null } }>(o: {
  kind: string;
  owners: Informer<T>;
  pods: Informer<Pod>;
  queue: WorkQueue;
  expectations: Expectations;
  /** The owner's selector; default spec.selector as a LabelSelector (a ReplicationController's is a plain map). */
  selectorOf?(owner: T): Selector;
}): void {
  watchOwners(o.owners, o.queue, o.expectations);
  watchOwnedPods<T>(o.pods, { ...o, selectorOf: o.selectorOf ?? ((owner) => selectorOf(owner as PodOwner)), minReadySecondsOf: (owner) => owner.spec?.minReadySeconds ?? 0 });
}
