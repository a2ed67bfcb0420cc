// Pods as the workload controllers see them: which count as active, ready
// and available (upstream's podutil), a new pod from a template owned by its
// controller, and the order in which pods go first when scaling down
// (upstream's ActivePodsWithRanks).

import { parseTimestamp, type ApiObject, type ObjectMeta } from "../../machinery/index.js";
import type { Pod, PodSpec } from "../../api/core/types.js";
import { controllerRef } from "./resources.js";
import { isPodReady } from "../resources.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";
import { copyJson } from "../../machinery/patch/json-value.js";

export type { Pod };

export interface PodTemplate {
  metadata?: ObjectMeta;
  spec?: PodSpec | Record<string, unknown>;
}

/** Not finished and not being deleted (upstream's IsPodActive). */
export function isPodActive(pod: Pod): boolean {
  return !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
}

export function isPodTerminating(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp;
}

function readyCondition(pod: Pod) {
  return (pod.status?.conditions ?? []).find((c) => c.type === "Ready");
}

export { isPodReady };

/** Ready for at least minReadySeconds (by the Ready condition's transition time). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number = Date.now()): boolean {
  const ready = readyCondition(pod);
  if (ready?.status !== "True") return false;
  if (minReadySeconds <= 0) return true;
  const since = ready.lastTransitionTime ? parseTimestamp(ready.lastTransitionTime).getTime() : NaN;
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now;
}

/** Milliseconds until a ready pod becomes available (0 when it is, or never will be by waiting). */
export function msUntilAvailable(pod: Pod, minReadySeconds: number, now: number = Date.now()): number {
  const ready = readyCondition(pod);
  if (ready?.status !== "True" || minReadySeconds <= 0 || !ready.lastTransitionTime) return 0;
  return Math.max(0, parseTimestamp(ready.lastTransitionTime).getTime() + minReadySeconds * 1000 - now);
}

/**
 * A pod for `owner` from its template (upstream's GetPodFromTemplate): the
 * template's labels, annotations and spec, a generated name (unless `name`
 * is given), and the owner as its controller.
 */
export function podFromTemplate(template: PodTemplate | undefined, owner: ApiObject, options: { name?: string; generateName?: string; labels?: Record<string, string> } = {}): Pod {
  const meta = template?.metadata ?? {};
  const labels = { ...(meta.labels ?? {}), ...(options.labels ?? {}) };
  const metadata: ObjectMeta = {
    ...(options.name !== undefined ? { name: options.name } : { generateName: options.generateName ?? `${owner.metadata.name}-` }),
    namespace: owner.metadata.namespace!,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
    ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
    ownerReferences: [controllerRef(owner, "apps/v1")],
  };
  return { apiVersion: "v1", kind: "Pod", metadata, spec: copyJson((template?.spec ?? {}) as PodSpec) };
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * Sorts pods so the ones to delete first come first (upstream's
 * ActivePodsWithRanks.Less): unscheduled before scheduled; Pending, Unknown,
 * then Running; not ready before ready; lower pod-deletion-cost first; pods
 * doubled up on a node with more siblings first; ready for less time first;
 * more restarts first; newer first.
 */
export function rankPodsForDeletion(pods: Pod[], options: { deletionCostKey: string; siblingsOnNode?: (pod: Pod) => number; now?: number }): Pod[] {
  const now = options.now ?? Date.now();
  const cost = (p: Pod) => {
    const v = Number(p.metadata.annotations?.[options.deletionCostKey] ?? 0);
    return Number.isFinite(v) ? v : 0;
  };
  const readySince = (p: Pod) => {
    const t = readyCondition(p)?.lastTransitionTime;
    return t ? parseTimestamp(t).getTime() : now;
  };
  const restarts = (p: Pod) => (p.status?.containerStatuses ?? []).reduce((n, c) => Math.max(n, c.restartCount ?? 0), 0);
  const created = (p: Pod) => (p.metadata.creationTimestamp ? parseTimestamp(p.metadata.creationTimestamp).getTime() : 0);
  const cmp = (a: Pod, b: Pod): number => {
    const aBound = !!a.spec?.nodeName, bBound = !!b.spec?.nodeName;
    if (aBound !== bBound) return aBound ? 1 : -1;
    const ap = PHASE_RANK[a.status?.phase ?? "Pending"] ?? 0, bp = PHASE_RANK[b.status?.phase ?? "Pending"] ?? 0;
    if (ap !== bp) return ap - bp;
    const ar = isPodReady(a), br = isPodReady(b);
    if (ar !== br) return ar ? 1 : -1;
    if (cost(a) !== cost(b)) return cost(a) - cost(b);
    if (options.siblingsOnNode) {
      const as = options.siblingsOnNode(a), bs = options.siblingsOnNode(b);
      if (as !== bs) return bs - as;
    }
    if (ar && br && readySince(a) !== readySince(b)) return readySince(b) - readySince(a);
    if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
    return created(b) - created(a);
  };
  return [...pods].sort(cmp);
}
