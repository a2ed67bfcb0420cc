// A StatefulSet's volumeClaimTemplates (upstream's stateful_set_utils): each
// pod <set>-<ordinal> gets its own claim <template>-<set>-<ordinal>, made
// before the pod, labelled with the set's selector, and mounted as the volume
// named like the template (replacing a pod volume of that name).
// persistentVolumeClaimRetentionPolicy (gate StatefulSetAutoDeletePVC) is
// carried by owner references, which the garbage collector acts on:
//   whenDeleted=Delete: the claims of the set's pods are owned by the set
//     (deleting the set deletes them);
//   whenScaled=Delete: the claims of a pod scaled away (ordinal outside
//     the replicas) are owned by that pod (deleting it deletes them);
//   Retain on both: neither reference (claims outlive set and pods).

import type { StatefulSet } from "../../api/apps/types.js";
import type { PersistentVolumeClaim } from "../../api/core/persistent-volume-types.js";
import type { OwnerReference } from "../../machinery/index.js";
import type { Pod } from "../workload/index.js";

interface ClaimTemplate {
  metadata?: { name?: string; labels?: Record<string, string> | null; annotations?: Record<string, string> | null };
  spec?: PersistentVolumeClaim["spec"];
}

function templates(set: StatefulSet): ClaimTemplate[] {
  return (set.spec?.volumeClaimTemplates ?? []) as ClaimTemplate[];
}

/** upstream's getPersistentVolumeClaimName: <template>-<set>-<ordinal>. */
export function claimName(set: StatefulSet, template: string, ordinal: number): string {
  return `${template}-${set.metadata.name}-${ordinal}`;
}

/** The claims pod `ordinal` uses, by template name, as they are created (labels: the template's, then the set's selector). */
export function claimsFor(set: StatefulSet, ordinal: number): Map<string, PersistentVolumeClaim> {
  const out = new Map<string, PersistentVolumeClaim>();
  for (const t of templates(set)) {
    const name = t.metadata?.name ?? "";
    const labels = { ...(t.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) };
    out.set(name, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: claimName(set, name, ordinal),
        namespace: set.metadata.namespace!,
        ...(Object.keys(labels).length > 0 ? { labels } : {}),
        ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      },
      spec: structuredClone(t.spec ?? {}),
    });
  }
  return out;
}

/** upstream's updateStorage: a volume per template (named like it, on its claim), then the pod's other volumes. */
export function withClaimVolumes(set: StatefulSet, pod: Pod, ordinal: number): void {
  const claims = claimsFor(set, ordinal);
  if (claims.size === 0) return;
  const spec = (pod.spec ??= {}) as { volumes?: { name: string; [k: string]: unknown }[] | null };
  const own = [...claims].map(([name, c]) => ({ name, persistentVolumeClaim: { claimName: c.metadata.name! } }));
  spec.volumes = [...own, ...(spec.volumes ?? []).filter((v) => !claims.has(v.name))];
}

/** Whether pod `ordinal` mounts each template's claim (upstream's storageMatches). */
export function storageMatches(set: StatefulSet, pod: Pod, ordinal: number): boolean {
  const volumes = ((pod.spec as { volumes?: { name: string; persistentVolumeClaim?: { claimName?: string } }[] | null } | undefined)?.volumes ?? []);
  for (const [name, claim] of claimsFor(set, ordinal)) {
    if (volumes.find((v) => v.name === name)?.persistentVolumeClaim?.claimName !== claim.metadata.name) return false;
  }
  return true;
}

const sameOwner = (a: OwnerReference, b: { uid?: string | undefined }) => a.uid === b.uid;

/**
 * The owner references claim `claim` should carry under the set's retention
 * policy (upstream's updateClaimOwnerRefForSetAndPod); `condemned` when its
 * pod's ordinal is outside the set's replicas. Other owners are kept.
 */
export function retentionOwners(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod | undefined, condemned: boolean): OwnerReference[] {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  const deleteWithSet = policy.whenDeleted === "Delete";
  const deleteWhenScaled = policy.whenScaled === "Delete";
  const refs = (claim.metadata.ownerReferences ?? []).filter((r) => !sameOwner(r, set.metadata) && (pod === undefined || !sameOwner(r, pod.metadata)));
  const setRef: OwnerReference = { apiVersion: "apps/v1", kind: "StatefulSet", name: set.metadata.name!, uid: set.metadata.uid! };
  const podRef = pod === undefined ? undefined : { apiVersion: "v1", kind: "Pod", name: pod.metadata.name!, uid: pod.metadata.uid! };
  const keepExisting = (owner: { uid?: string | undefined }, fresh: OwnerReference) => (claim.metadata.ownerReferences ?? []).find((r) => sameOwner(r, owner)) ?? fresh;
  if (deleteWhenScaled && condemned) {
    if (podRef !== undefined) refs.push(keepExisting(pod!.metadata, podRef));
  } else if (deleteWithSet) {
    refs.push(keepExisting(set.metadata, setRef));
  }
  return refs;
}

/** Whether two owner lists name the same owners (by uid), in any order. */
export function sameOwners(a: readonly OwnerReference[] | undefined, b: readonly OwnerReference[]): boolean {
  const x = (a ?? []).map((r) => r.uid).sort();
  const y = b.map((r) => r.uid).sort();
  return x.length === y.length && x.every((u, i) => u === y[i]);
}
