// Serves `eviction` (declared in src/api/subresources/eviction.ts), as
// upstream's EvictionREST: a pod that is not running yet, has finished or is
// already being deleted goes at once; otherwise the one PodDisruptionBudget
// selecting it must allow a disruption. Allowed: the budget's
// disruptionsAllowed is decremented and the pod recorded in disruptedPods
// (a compare-and-swap on the budget, so two evictions cannot spend one
// disruption), then the pod is deleted with the Eviction's delete options.
// Refused: 429 "Cannot evict pod as it would violate the pod's disruption
// budget." with a DisruptionBudget cause naming the budget (kubectl drain retries).

import type { Pod } from "../../../api/core/types.js";
import type { PodDisruptionBudget } from "../../../api/policy/index.js";
import { isPodReady, isPodTerminal } from "../../../api/core/pod-phase.js";
import { findSubresource } from "../../../api/resource.js";
import { ApiError, badRequest, forbidden, formatTimestamp, internalError, selectorFromLabelSelector, tooManyRequests, type ApiObject } from "../../../machinery/index.js";
import { readBody } from "../../http/body.js";
import { decodeObjectBody } from "../../http/decode-body.js";
import { sendStatusSuccess } from "../../http/respond.js";
import type { DeleteOptions } from "../../registry/deletion.js";
import type { SubresourceRequest } from "../request.js";
import { parseDryRun } from "../write-options.js";

const EVICTION_VERSIONS = ["policy/v1", "policy/v1beta1"];
/** upstream's MaxDisruptedPodSize: budgets with more unconfirmed evictions refuse more. */
const MAX_DISRUPTED_PODS = 2000;
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

interface Eviction {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  deleteOptions?: (Omit<DeleteOptions, "dryRun"> & { dryRun?: string[] }) | null;
}

function violation(causeMessage: string): ApiError {
  const err = tooManyRequests(VIOLATION, 0);
  err.status.details = { ...err.status.details, causes: [{ reason: "DisruptionBudget", message: causeMessage }] };
  return err;
}

/** upstream's canIgnorePDB: pods not (yet, or any more) running need no budget. */
function canIgnoreBudget(pod: Pod): boolean {
  return isPodTerminal(pod) || pod.status?.phase === "Pending" || !!pod.metadata.deletionTimestamp;
}

export async function evict(r: SubresourceRequest): Promise<void> {
  const eviction = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding).value as Eviction;
  if (typeof eviction !== "object" || eviction === null || Array.isArray(eviction)) throw badRequest("the body of the request must be an Eviction object");
  if (eviction.kind !== undefined && eviction.kind !== "Eviction") throw badRequest(`the kind in the data (${String(eviction.kind)}) does not match the expected kind (Eviction)`);
  if (eviction.apiVersion !== undefined && !EVICTION_VERSIONS.includes(eviction.apiVersion)) throw badRequest(`the API version in the data (${String(eviction.apiVersion)}) does not match the expected API version (policy/v1)`);
  if (eviction.metadata?.name !== undefined && eviction.metadata.name !== r.name) throw badRequest("name in URL does not match name in Eviction object");
  const opts = eviction.deleteOptions ?? {};
  const dryRun = parseDryRun(r.query.getAll("dryRun")) || parseDryRun(Array.isArray(opts.dryRun) ? opts.dryRun : []);
  const namespace = r.path.namespace!;
  const pod = (await r.store.get(namespace, r.name)).object as Pod;

  if (!canIgnoreBudget(pod)) await spendDisruption(r, pod, dryRun);
  await r.store.delete(namespace, r.name, { gracePeriodSeconds: opts.gracePeriodSeconds, preconditions: opts.preconditions, propagationPolicy: opts.propagationPolicy, orphanDependents: opts.orphanDependents, dryRun });
  return sendStatusSuccess(r.res, 201);
}

/** Checks the pod's budget and takes one disruption from it (not on dry runs). */
async function spendDisruption(r: SubresourceRequest, pod: Pod, dryRun: boolean): Promise<void> {
  const budgets = r.pdbs;
  if (budgets === undefined) return;
  const labels = pod.metadata.labels ?? {};
  const matching = (await budgets.list(pod.metadata.namespace, {})).items
    .map((i) => i.object as PodDisruptionBudget)
    .filter((pdb) => {
      const sel = pdb.spec?.selector;
      if (sel === undefined || sel === null) return false;
      try {
        const s = selectorFromLabelSelector(sel);
        return !s.empty && s.matches(labels);
      } catch {
        return false;
      }
    });
  if (matching.length === 0) return;
  if (matching.length > 1) throw internalError(new Error("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."));
  const name = matching[0]!.metadata.name!;
  const check = (pdb: PodDisruptionBudget): "skip" | "take" => {
    // An unready pod does not count as healthy: evicting it spends nothing when the budget allows it.
    if (!isPodReady(pod)) {
      if (pdb.spec?.unhealthyPodEvictionPolicy === "AlwaysAllow") return "skip";
      if ((pdb.status?.currentHealthy ?? 0) >= (pdb.status?.desiredHealthy ?? 0) && (pdb.status?.desiredHealthy ?? 0) > 0) return "skip";
    }
    const st = pdb.status ?? {};
    if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw violation(`The disruption budget ${name} is still being processed by the server.`);
    if ((st.disruptionsAllowed ?? 0) < 0) throw forbidden({ group: "policy", resource: "poddisruptionbudgets" }, name, "pdb disruptions allowed is negative");
    if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
      throw forbidden({ group: "policy", resource: "poddisruptionbudgets" }, name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller");
    }
    if ((st.disruptionsAllowed ?? 0) === 0) throw violation(`The disruption budget ${name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`);
    return "take";
  };
  if (dryRun) {
    check(matching[0]!);
    return;
  }
  const status = findSubresource(budgets.def, "status");
  // Compare-and-swap: a concurrent eviction makes the store run this again on the budget as it is now.
  await budgets.modify(pod.metadata.namespace, name, (current: ApiObject) => {
    const pdb = current as PodDisruptionBudget;
    if (check(pdb) === "skip") return current;
    const st = (pdb.status ??= {});
    st.disruptionsAllowed = (st.disruptionsAllowed ?? 0) - 1;
    st.disruptedPods = { ...(st.disruptedPods ?? {}), [pod.metadata.name!]: formatTimestamp(new Date()) };
    return pdb;
  }, status !== undefined ? { subresource: status } : {});
}
