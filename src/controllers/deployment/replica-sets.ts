// Pure Deployment arithmetic (upstream's deployment/util): surge and
// unavailability budgets, revisions, which ReplicaSet is new, replica sums,
// proportional scaling, and the completeness/progress/timeout tests behind
// the Progressing condition.

import type { Deployment, DeploymentStatus, PodTemplateSpec, ReplicaSet } from "../../api/apps/types.js";
import { parseTimestamp } from "../../machinery/index.js";
import type { WorkloadKeys } from "../../machinery/naming.js";
import { findCondition, scaled, semanticEqual } from "../workload/index.js";

export const POD_TEMPLATE_HASH = "pod-template-hash";
/** kubectl (rollout history, rollout undo) reads revisions under this fixed key, whatever the server's naming. */
export const KUBECTL_REVISION_ANNOTATION = "deployment.kubernetes.io/revision";

export const replicasOf = (d: { spec?: { replicas?: number } } | undefined): number => d?.spec?.replicas ?? 1;
const sum = (sets: readonly ReplicaSet[], f: (rs: ReplicaSet) => number | undefined) => sets.reduce((n, rs) => n + (f(rs) ?? 0), 0);
export const specReplicas = (sets: readonly ReplicaSet[]) => sum(sets, (rs) => rs.spec?.replicas);
export const actualReplicas = (sets: readonly ReplicaSet[]) => sum(sets, (rs) => rs.status?.replicas);
export const readyReplicas = (sets: readonly ReplicaSet[]) => sum(sets, (rs) => rs.status?.readyReplicas);
export const availableReplicas = (sets: readonly ReplicaSet[]) => sum(sets, (rs) => rs.status?.availableReplicas);
export const activeSets = (sets: readonly ReplicaSet[]) => sets.filter((rs) => (rs.spec?.replicas ?? 0) > 0);

const isRolling = (d: Deployment) => (d.spec?.strategy?.type ?? "RollingUpdate") === "RollingUpdate";

/** [maxSurge, maxUnavailable] for the deployment (upstream's ResolveFenceposts: never both 0). */
function fenceposts(d: Deployment): [number, number] {
  const ru = d.spec?.strategy?.rollingUpdate ?? {};
  const replicas = replicasOf(d);
  const surge = scaled(ru.maxSurge ?? "25%", replicas, true);
  const unavailable = scaled(ru.maxUnavailable ?? "25%", replicas, false);
  return surge === 0 && unavailable === 0 ? [0, 1] : [surge, unavailable];
}

export function maxSurge(d: Deployment): number {
  return isRolling(d) ? fenceposts(d)[0] : 0;
}

export function maxUnavailable(d: Deployment): number {
  if (!isRolling(d) || replicasOf(d) === 0) return 0;
  return Math.min(fenceposts(d)[1], replicasOf(d));
}

const INT64_MAX = (1n << 63n) - 1n;

/**
 * A revision annotation as upstream's strconv.ParseInt(v, 10, 64): a signed
 * decimal int64, or undefined. Revisions are int64 upstream and clients may
 * set large ones (3546343826724305832), which a JS number would round.
 */
export function parseRevision(v: string | undefined): bigint | undefined {
  if (v === undefined || !/^[+-]?[0-9]+$/.test(v)) return undefined;
  const n = BigInt(v);
  return n > INT64_MAX || n < -INT64_MAX - 1n ? undefined : n;
}

/** The revision of a ReplicaSet or Deployment; 0 when absent or not an int64 (upstream's MaxRevision skips those). */
export function revisionOf(obj: { metadata: { annotations?: Record<string, string> } }, keys: WorkloadKeys): bigint {
  return parseRevision(obj.metadata.annotations?.[keys.deploymentRevision]) ?? 0n;
}

/** Templates equal once the pod-template-hash label is left out (upstream's EqualIgnoreHash). */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  const strip = (t: PodTemplateSpec | undefined) => {
    const c = structuredClone(t ?? {});
    if (c.metadata?.labels) {
      delete c.metadata.labels[POD_TEMPLATE_HASH];
      if (Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
    }
    return c;
  };
  return semanticEqual(strip(a), strip(b));
}

const created = (rs: ReplicaSet) => (rs.metadata.creationTimestamp ? parseTimestamp(rs.metadata.creationTimestamp).getTime() : 0);

export function byCreation(sets: readonly ReplicaSet[]): ReplicaSet[] {
  return [...sets].sort((a, b) => created(a) - created(b) || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

/** The oldest ReplicaSet whose template is the deployment's (upstream's FindNewReplicaSet). */
export function findNewReplicaSet(d: Deployment, sets: readonly ReplicaSet[]): ReplicaSet | undefined {
  return byCreation(sets).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

/** Replicas for the new ReplicaSet this step (upstream's NewRSNewReplicas). */
export function newReplicaSetReplicas(d: Deployment, all: readonly ReplicaSet[], newRS: ReplicaSet | undefined): number {
  if (!isRolling(d)) return replicasOf(d);
  const current = newRS?.spec?.replicas ?? 0;
  const total = specReplicas(all);
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (total >= maxTotal) return current;
  return current + Math.max(0, Math.min(maxTotal - total, replicasOf(d) - current));
}

/** Whether the replica annotations need rewriting (upstream's ReplicasAnnotationsNeedUpdate). */
export function replicaAnnotationsStale(rs: ReplicaSet, d: Deployment, keys: WorkloadKeys): boolean {
  const a = rs.metadata.annotations ?? {};
  return a[keys.desiredReplicas] !== String(replicasOf(d)) || a[keys.maxReplicas] !== String(replicasOf(d) + maxSurge(d));
}

/** The one active (or the newest) ReplicaSet, when at most one has replicas (upstream's FindActiveOrLatest). */
export function activeOrLatest(newRS: ReplicaSet | undefined, old: readonly ReplicaSet[]): ReplicaSet | undefined {
  const newestFirst = byCreation(old).reverse();
  const active = activeSets([...newestFirst, ...(newRS ? [newRS] : [])]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/** The new ReplicaSet holds all replicas, all available (upstream's IsSaturated). */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined, keys: WorkloadKeys): boolean {
  if (rs === undefined) return false;
  const desired = rs.metadata.annotations?.[keys.desiredReplicas];
  return desired === String(replicasOf(d)) && rs.spec?.replicas === replicasOf(d) && rs.status?.availableReplicas === replicasOf(d);
}

/**
 * How much of `toAdd` this ReplicaSet takes when a rolling deployment is
 * scaled mid-rollout (upstream's GetProportion): its share of the old size
 * recorded in max-replicas, capped by what is left to hand out.
 */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number, keys: WorkloadKeys): number {
  const size = rs.spec?.replicas ?? 0;
  if (size === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (replicasOf(d) === 0) fraction = -size;
  else {
    const target = replicasOf(d) + maxSurge(d);
    const annotated = Number(rs.metadata.annotations?.[keys.maxReplicas]);
    const base = Number.isFinite(annotated) && annotated > 0 ? annotated : d.status?.replicas ?? 0;
    fraction = base > 0 ? Math.round((size * target) / base) - size : 0;
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

export function hasProgressDeadline(d: Deployment): boolean {
  const s = d.spec?.progressDeadlineSeconds;
  return s !== undefined && s !== null && s !== 2147483647;
}

export function isComplete(d: Deployment, status: DeploymentStatus): boolean {
  const n = replicasOf(d);
  return status.updatedReplicas === n && status.replicas === n && status.availableReplicas === n && (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

export function isProgressing(d: Deployment, next: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (next.replicas ?? 0) - (next.updatedReplicas ?? 0);
  return (next.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) || newOld < oldOld || (next.readyReplicas ?? 0) > (old.readyReplicas ?? 0) || (next.availableReplicas ?? 0) > (old.availableReplicas ?? 0);
}

/** Milliseconds left before the progress deadline (negative once passed); undefined when not timing. */
export function msToDeadline(d: Deployment, status: DeploymentStatus, now = Date.now()): number | undefined {
  if (!hasProgressDeadline(d)) return undefined;
  const c = findCondition(status.conditions, "Progressing");
  if (c === undefined || c.reason === "NewReplicaSetAvailable" || c.reason === "ProgressDeadlineExceeded" || !c.lastUpdateTime) return undefined;
  return parseTimestamp(c.lastUpdateTime).getTime() + d.spec!.progressDeadlineSeconds! * 1000 - now;
}
