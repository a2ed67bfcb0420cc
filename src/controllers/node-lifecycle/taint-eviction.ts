// The taint eviction controller (upstream's taint-eviction-controller, split out of node lifecycle
// in 1.29): a pod on a node with NoExecute taints it does not tolerate is deleted at once; one that
// tolerates them for tolerationSeconds is deleted that long after the taint was added; one that
// tolerates them forever stays. Deleted pods first get the DisruptionTarget condition, as upstream.

import { formatTimestamp, isApiError, parseTimestamp } from "../../machinery/index.js";
import { WorkQueue, keyOf, splitKey, type ProcessResult } from "../../client/index.js";
import type { Node, Pod, Taint } from "../../api/core/types.js";
import { type ControllerContext, type ControllerDescriptor, nowMs } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { type Counter, MetricsRegistry } from "../../component/metrics/index.js";
import { NODES, PODS } from "../../api/resource-refs.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";
import { tolerationWindowMs } from "./taints.js";
import { EventRecorder } from "../events.js";
import { POD_NODE_NAME_INDEX, podNodeNameIndex } from "../indexes.js";

export const taintEvictionController: ControllerDescriptor = {
  name: "taint-eviction-controller",
  enabledByDefault: true,
  run: (context) => new TaintEvictionController(context).run(),
};

export class TaintEvictionController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "taint_eviction_controller", baseDelayMs: 50, maxDelayMs: 30_000 });
  readonly #deletions: Counter;
  readonly #events: EventRecorder;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#events = new EventRecorder(context, "taint-eviction-controller");
    this.#deletions = (context.metrics ?? new MetricsRegistry()).counter({
      name: "taint_eviction_controller_pod_deletions_total",
      help: "Total number of Pods deleted by TaintEvictionController since its start.",
    });
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    const nodes = informers.informerFor<Node>({ resource: NODES });
    const pods = informers.informerFor<Pod>({ resource: PODS });
    pods.addIndexers({ [POD_NODE_NAME_INDEX]: podNodeNameIndex });
    const onNode = (node: Node) => {
      for (const key of pods.indexKeys(POD_NODE_NAME_INDEX, node.metadata.name!)) this.#queue.add(key);
    };
    nodes.addEventHandler({ onAdd: onNode, onUpdate: (old, node) => JSON.stringify(old.spec?.taints) !== JSON.stringify(node.spec?.taints) && onNode(node) });
    const onPod = (pod: Pod) => {
      if (pod.spec?.nodeName) this.#queue.add(keyOf(pod));
    };
    pods.addEventHandler({ onAdd: onPod, onUpdate: (_o, p) => onPod(p) });
    await runQueue(this.#ctx, { name: "taint-eviction-controller", queue: this.#queue, workers: 4, process: (key) => this.sync(key) });
  }

  /** Evicts the pod if its time on a NoExecute-tainted node is up; otherwise says when to look again. */
  async sync(key: string): Promise<ProcessResult | void> {
    const { informers } = this.#ctx;
    const pod = informers.informerFor<Pod>({ resource: PODS }).get(key);
    if (pod === undefined || pod.metadata.deletionTimestamp || isPodTerminal(pod) || !pod.spec?.nodeName) return;
    const node = informers.informerFor<Node>({ resource: NODES }).get(pod.spec.nodeName);
    const taints = (node?.spec?.taints ?? []).filter((t) => t.effect === "NoExecute");
    if (taints.length === 0) return;
    const window = tolerationWindowMs(pod.spec.tolerations ?? [], taints);
    if (window === Infinity) return;
    const due = addedAt(taints, nowMs(this.#ctx)) + window;
    const wait = due - nowMs(this.#ctx);
    if (wait > 0) return { requeueAfterMs: wait };
    await this.#evict(pod);
  }

  async #evict(pod: Pod): Promise<void> {
    const { client } = this.#ctx;
    const { namespace, name } = splitKey(keyOf(pod));
    try {
      const conditions = (pod.status?.conditions ?? []).filter((c) => c?.type !== "DisruptionTarget");
      conditions.push({ type: "DisruptionTarget", status: "True", reason: "DeletionByTaintManager", message: "Taint manager: deleting due to NoExecute taint", lastTransitionTime: formatTimestamp(new Date(nowMs(this.#ctx))) });
      await client.update(PODS, { ...pod, status: { ...pod.status, conditions } }, { subresource: "status" });
      await client.delete(PODS, { namespace: namespace!, name, preconditions: { uid: pod.metadata.uid! } });
      this.#deletions.inc();
      this.#events.record({ ...pod, apiVersion: "v1", kind: "Pod" }, "Normal", "TaintManagerEviction", `Marking for deletion Pod ${namespace}/${name}`);
      this.#ctx.log(`taint-eviction-controller: deleted pod ${namespace}/${name} from node ${pod.spec?.nodeName} (NoExecute taint)`);
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
    }
  }
}

/** The latest timeAdded of the taints (the window starts when the last one came); now when none says. */
function addedAt(taints: readonly Taint[], now: number): number {
  const times = taints.map((t) => (t.timeAdded ? parseTimestamp(t.timeAdded).getTime() : now));
  return Math.max(...times);
}
