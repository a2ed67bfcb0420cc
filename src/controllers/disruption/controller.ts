// The disruption controller (upstream's disruption controller): keeps every
// PodDisruptionBudget's status current for pods/eviction to decide by.
// expectedPods and desiredHealthy follow upstream's rules (a number
// minAvailable counts the selected pods; a percentage or maxUnavailable is
// taken of the summed scale of the pods' controllers: ReplicaSet, or its
// Deployment, ReplicationController, StatefulSet); currentHealthy counts
// ready pods not being deleted and not just evicted; disruptionsAllowed is
// their difference (0 while no pods are expected). Evictions not followed by
// a deletion within two minutes are forgotten. A budget whose pods' scale
// cannot be found gets disruptionsAllowed 0 and a SyncFailed condition.

import { isDeepStrictEqual } from "node:util";
import { NAMESPACE_INDEX, WorkQueue, keyOf, splitKey, type Informer, type ResourceRef } from "../../client/index.js";
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from "../../api/policy/index.js";
import type { Condition, Pod } from "../../api/core/types.js";
import { isPodReady } from "../../api/core/pod-phase.js";
import { errorMessage, nowMs, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { isApiError, selectorFromLabelSelector, type ApiObject, type OwnerReference, type Selector } from "../../machinery/index.js";
import { DEPLOYMENTS, PODDISRUPTIONBUDGETS, PODS, REPLICASETS, REPLICATIONCONTROLLERS, STATEFULSETS } from "../../api/resource-refs.js";
import { controllerOf, setCondition } from "../resources.js";
import { scaled } from "../workload/int-or-percent.js";

/** upstream's DeletionTimeout: how long an eviction is expected to be followed by the pod's deletion. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

export const disruptionController: ControllerDescriptor = {
  name: "disruption-controller",
  aliases: ["disruption"],
  enabledByDefault: true,
  run: (context) => new DisruptionController(context).run(),
};

/** The pods a budget selects: policy/v1's empty selector selects every pod of the namespace, a missing one none. */
function selectorOf(pdb: PodDisruptionBudget): Selector | undefined {
  const sel = pdb.spec?.selector;
  if (sel === undefined || sel === null) return undefined;
  try {
    return selectorFromLabelSelector(sel);
  } catch {
    return undefined;
  }
}

type Scaled = ApiObject & { spec?: { replicas?: number }; metadata: ApiObject["metadata"] };

const CONTROLLERS: Readonly<Record<string, ResourceRef>> = { ReplicaSet: REPLICASETS, ReplicationController: REPLICATIONCONTROLLERS, StatefulSet: STATEFULSETS, Deployment: DEPLOYMENTS };

export class DisruptionController {
  readonly #ctx: ControllerContext;
  readonly queue = new WorkQueue({ name: "disruption" });
  readonly #budgets: Informer<PodDisruptionBudget>;
  readonly #pods: Informer<Pod>;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#budgets = context.informers.informerFor<PodDisruptionBudget>({ resource: PODDISRUPTIONBUDGETS });
    this.#pods = context.informers.informerFor<Pod>({ resource: PODS });
  }

  async run(): Promise<void> {
    const enqueue = (pdb: PodDisruptionBudget) => this.queue.add(keyOf(pdb));
    this.#budgets.addEventHandler({ onAdd: enqueue, onUpdate: (_o, pdb) => enqueue(pdb), onDelete: () => {} });
    const podChanged = (pod: Pod) => {
      const labels = pod.metadata.labels ?? {};
      for (const pdb of this.#budgets.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? "")) {
        if (selectorOf(pdb)?.matches(labels)) enqueue(pdb);
      }
    };
    this.#pods.addEventHandler({
      onAdd: podChanged,
      onUpdate: (old, pod) => {
        podChanged(pod);
        if (!isDeepStrictEqual(old.metadata.labels ?? {}, pod.metadata.labels ?? {})) podChanged(old);
      },
      onDelete: podChanged,
    });
    await runQueue(this.#ctx, { name: "disruption-controller", queue: this.queue, workers: 1, informers: [this.#budgets, this.#pods], process: (key) => this.sync(key) });
  }

  async sync(key: string): Promise<{ requeueAfterMs: number } | void> {
    const pdb = this.#budgets.get(key);
    if (pdb === undefined) return;
    const { namespace } = splitKey(key);
    const selector = selectorOf(pdb);
    const pods = selector === undefined ? [] : this.#pods.byIndex(NAMESPACE_INDEX, namespace!).filter((p) => selector.matches(p.metadata.labels ?? {}));
    const now = nowMs(this.#ctx);
    let counts: { expected: number; desired: number };
    try {
      counts = await this.#expected(pdb, pods);
    } catch (err) {
      await this.#write(pdb, { ...(pdb.status ?? {}), disruptionsAllowed: 0 }, { type: "DisruptionAllowed", status: "False", reason: "SyncFailed", message: errorMessage(err) }, now);
      throw err;
    }
    const { disrupted, recheckAt } = this.#disrupted(pdb, pods, now);
    const healthy = pods.filter((p) => !p.metadata.deletionTimestamp && !(p.metadata.name! in disrupted) && isPodReady(p)).length;
    const allowed = counts.expected <= 0 ? 0 : Math.max(0, healthy - counts.desired);
    const status: PodDisruptionBudgetStatus = {
      ...(pdb.status ?? {}),
      currentHealthy: healthy,
      desiredHealthy: counts.desired,
      expectedPods: counts.expected,
      disruptionsAllowed: allowed,
      disruptedPods: Object.keys(disrupted).length > 0 ? disrupted : null,
      ...(pdb.metadata.generation !== undefined ? { observedGeneration: pdb.metadata.generation } : {}),
    };
    if (status.disruptedPods === null) delete status.disruptedPods;
    const condition = allowed > 0 ? { type: "DisruptionAllowed", status: "True", reason: "SufficientPods", message: "" } : { type: "DisruptionAllowed", status: "False", reason: "InsufficientPods", message: "" };
    await this.#write(pdb, status, condition, now);
    if (recheckAt !== undefined) return { requeueAfterMs: Math.max(recheckAt - now, 1000) };
  }

  /** upstream's getExpectedPodCount. */
  async #expected(pdb: PodDisruptionBudget, pods: readonly Pod[]): Promise<{ expected: number; desired: number }> {
    const spec = pdb.spec ?? {};
    if (spec.maxUnavailable != null) {
      const expected = await this.#scale(pods);
      return { expected, desired: Math.max(0, expected - scaled(spec.maxUnavailable, expected, true)) };
    }
    if (typeof spec.minAvailable === "number") return { expected: pods.length, desired: spec.minAvailable };
    if (typeof spec.minAvailable === "string") {
      const expected = await this.#scale(pods);
      return { expected, desired: scaled(spec.minAvailable, expected, true) };
    }
    return { expected: 0, desired: 0 };
  }

  /** The summed scale of the pods' controllers (upstream's getExpectedScale); unmanaged pods add nothing. */
  async #scale(pods: readonly Pod[]): Promise<number> {
    const seen = new Map<string, number>();
    for (const pod of pods) {
      const ref = controllerOf(pod);
      if (ref === undefined || seen.has(ref.uid)) continue;
      const found = await this.#controllerScale(ref, pod.metadata.namespace!);
      if (found === undefined) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
      seen.set(found.uid, found.replicas);
    }
    return [...seen.values()].reduce((a, b) => a + b, 0);
  }

  /** A ReplicaSet owned by a Deployment scales with the Deployment (upstream's finders). */
  async #controllerScale(ref: OwnerReference, namespace: string): Promise<{ uid: string; replicas: number } | undefined> {
    const resource = CONTROLLERS[ref.kind];
    if (resource === undefined) return undefined;
    let obj: Scaled;
    try {
      obj = await this.#ctx.client.get<Scaled>(resource, { namespace, name: ref.name });
    } catch (err) {
      if (isApiError(err, "NotFound")) return undefined;
      throw err;
    }
    if (obj.metadata.uid !== ref.uid) return undefined;
    if (ref.kind === "ReplicaSet") {
      const owner = controllerOf(obj);
      if (owner?.kind === "Deployment") return this.#controllerScale(owner, namespace);
    }
    return { uid: obj.metadata.uid!, replicas: obj.spec?.replicas ?? 1 };
  }

  /** upstream's buildDisruptedPodMap: evictions of pods still there and not yet being deleted, within the timeout. */
  #disrupted(pdb: PodDisruptionBudget, pods: readonly Pod[], now: number): { disrupted: Record<string, string>; recheckAt: number | undefined } {
    const recorded = pdb.status?.disruptedPods ?? {};
    const disrupted: Record<string, string> = {};
    let recheckAt: number | undefined;
    for (const pod of pods) {
      const name = pod.metadata.name!;
      if (pod.metadata.deletionTimestamp || recorded[name] === undefined) continue;
      const expectedDeletion = Date.parse(recorded[name]!) + DELETION_TIMEOUT_MS;
      if (expectedDeletion < now) continue;
      disrupted[name] = recorded[name]!;
      if (recheckAt === undefined || expectedDeletion < recheckAt) recheckAt = expectedDeletion;
    }
    return { disrupted, recheckAt };
  }

  async #write(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus, condition: Condition, now: number): Promise<void> {
    const conditions = [...((pdb.status?.conditions ?? []) as Condition[])];
    setCondition(conditions, { ...condition, observedGeneration: pdb.metadata.generation } as Condition, now);
    const next = { ...status, conditions };
    if (isDeepStrictEqual(next, pdb.status ?? {})) return;
    // Over the version read: an eviction that spent a disruption since is a conflict, and the pass runs again.
    await this.#ctx.client.update(PODDISRUPTIONBUDGETS, { ...pdb, status: next }, { subresource: "status" }).catch((err: unknown) => {
      if (!isApiError(err, "NotFound")) throw err;
    });
  }
}
