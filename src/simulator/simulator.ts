// N simulated nodes in one process (issue 20, "Simulated nodes at scale"),
// as kwok's controller runs them: each node registers its Node, renews its
// Lease every 10 s (jittered, as upstream's lease controller) and reports its
// status at the agent's cadence (every nodeStatusReportFrequency, 5 min, when
// nothing changed). One watch of all bound pods, filtered here by node name,
// moves the pods of these nodes through the stages (stages.ts): Running with
// an address of the node's /24, Succeeded when told, and deleted with grace 0
// once marked for deletion. Every write goes through one bounded queue.

import type { Node, Pod } from "../api/core/types.js";
import type { Lease } from "../api/coordination/types.js";
import { NODES, PODS, leaseResource } from "../api/resource-refs.js";
import { Informer, type RestClient, type ResourceRef } from "../client/index.js";
import { isApiError } from "../machinery/index.js";
import type { Naming } from "../machinery/naming.js";
import { leaseObject, nodeConditions, nodeIP, nodeObject, nodeStatus, podCIDR, PodIPs, runningStatus, succeededStatus, MAX_NODES, type NodeShape } from "./objects.js";
import { DEFAULT_STAGES, stageWaitMs, succeedAfterMs, type Stage, type Stages } from "./stages.js";
import { WriteQueue } from "./write-queue.js";

export interface SimulatorOptions {
  readonly client: RestClient;
  readonly naming: Naming;
  readonly count: number;
  /** Node names are prefix + index (default "sim-node-"). */
  readonly namePrefix?: string;
  readonly stages?: Stages;
  readonly shape?: Partial<NodeShape>;
  /** Pod writes in flight at most (default 32). */
  readonly concurrency?: number;
  /**
   * Node writes (registrations, lease renewals, status reports) in flight at
   * most (default 16), in slots of their own: a real node's heartbeat never
   * waits for another node's pod writes, and a simulated one should not
   * either (with one shared pool, 100 lease renewals a second against a slow
   * server took most of it and pod status writes backed up by thousands).
   */
  readonly nodeConcurrency?: number;
  /** Lease duration (default 40 s); renewed every quarter of it (10 s), with 4% jitter. */
  readonly leaseDurationSeconds?: number;
  /** Status written when unchanged this often (default 5 min, the agent's nodeStatusReportFrequency). */
  readonly statusReportMs?: number;
  readonly log?: (line: string) => void;
  readonly random?: () => number;
}

export interface SimulatorStats {
  nodes: number;
  leaseWrites: number;
  statusWrites: number;
  podsRunning: number;
  podsSucceeded: number;
  podsDeleted: number;
  writesFailed: number;
  writesPending: number;
}

/** Upstream's lease controller jitters its period by up to this fraction. */
const LEASE_JITTER = 0.04;

interface SimNode {
  readonly index: number;
  readonly name: string;
  readonly ips: PodIPs;
  uid: string | undefined;
  node: Node | undefined;
  lease: Lease | undefined;
  leaseTimer?: ReturnType<typeof setTimeout>;
  statusTimer?: ReturnType<typeof setTimeout>;
}

interface SimPod {
  readonly node: SimNode;
  ip?: string;
  /** The furthest stage written or scheduled: the same event seen twice does nothing twice. */
  stage: "pending" | "starting" | "running" | "succeeded" | "deleting";
  timer?: ReturnType<typeof setTimeout>;
}

export class NodeSimulator {
  readonly #o: Required<Omit<SimulatorOptions, "log" | "shape">> & { log: (line: string) => void; shape: NodeShape };
  readonly #nodes = new Map<string, SimNode>();
  readonly #pods = new Map<string, SimPod>();
  readonly #nodeWrites: WriteQueue;
  readonly #podWrites: WriteQueue;
  readonly #leases: ResourceRef;
  readonly stats: SimulatorStats;
  #stopped = false;

  constructor(options: SimulatorOptions) {
    const count = options.count;
    if (!Number.isInteger(count) || count < 1 || count > MAX_NODES) throw new Error(`the node count must be between 1 and ${MAX_NODES} (got ${count})`);
    this.#o = {
      namePrefix: "sim-node-",
      stages: DEFAULT_STAGES,
      concurrency: 32,
      nodeConcurrency: 16,
      leaseDurationSeconds: 40,
      statusReportMs: 300_000,
      random: Math.random,
      ...options,
      log: options.log ?? (() => {}),
      shape: { cpu: "32", memory: "256Gi", pods: "110", ephemeralStorage: "100Gi", agentVersion: "v1.23.16", ...options.shape },
    };
    const log = (line: string) => this.#o.log(line);
    this.#nodeWrites = new WriteQueue({ concurrency: this.#o.nodeConcurrency, log });
    this.#podWrites = new WriteQueue({ concurrency: this.#o.concurrency, log });
    this.#leases = leaseResource(this.#o.naming);
    for (let i = 0; i < count; i++) {
      const name = `${this.#o.namePrefix}${i}`;
      this.#nodes.set(name, { index: i, name, ips: new PodIPs(podCIDR(i)), uid: undefined, node: undefined, lease: undefined });
    }
    this.stats = { nodes: count, leaseWrites: 0, statusWrites: 0, podsRunning: 0, podsSucceeded: 0, podsDeleted: 0, writesFailed: 0, writesPending: 0 };
  }

  get nodeNames(): string[] {
    return [...this.#nodes.keys()];
  }

  /** The numbers now (writes failed and pending read from the two queues). */
  snapshot(): SimulatorStats {
    const queues = [this.#nodeWrites, this.#podWrites];
    const sum = (of: (q: WriteQueue) => number) => queues.reduce((n, q) => n + of(q), 0);
    return { ...this.stats, writesFailed: sum((q) => q.stats.failed), writesPending: sum((q) => q.pending + q.inFlight) };
  }

  /**
   * Registers every node, then runs until `signal` fires: heartbeats, status
   * and the pods' stages. `onReady` is called once every node is registered
   * and the pod watch has synced.
   */
  async run(signal: AbortSignal, onReady?: () => void): Promise<void> {
    // Unpaged: one watch serves every simulated node, so a relist is of every bound pod, and a paged list
    // at a version is served out of etcd page by page (upstream 1.23 sends a list with a limit there); at
    // 30,000 pods under load that took 20 s a page while no pod moved. Unpaged, both servers answer it
    // from their watch cache.
    const pods = new Informer<Pod>({ client: this.#o.client, resource: PODS, fieldSelector: "spec.nodeName!=", pageSize: 0, log: (l) => this.#o.log(`pods: ${l}`) });
    pods.addEventHandler({
      onAdd: (p) => this.#onPod(p),
      onUpdate: (_old, p) => this.#onPod(p),
      onDelete: (p) => this.#onPodGone(p),
    });
    try {
      await this.#registerAll();
      if (signal.aborted) return;
      for (const node of this.#nodes.values()) this.#startHeartbeats(node);
      const watching = pods.run(signal);
      await pods.waitForSync(signal);
      if (!signal.aborted) onReady?.();
      await watching;
    } finally {
      this.#stop();
    }
  }

  #stop(): void {
    this.#stopped = true;
    for (const node of this.#nodes.values()) {
      clearTimeout(node.leaseTimer);
      clearTimeout(node.statusTimer);
    }
    for (const pod of this.#pods.values()) clearTimeout(pod.timer);
    this.#nodeWrites.close();
    this.#podWrites.close();
  }

  // ---- nodes ----

  async #registerAll(): Promise<void> {
    const done: Promise<void>[] = [];
    for (const node of this.#nodes.values()) {
      done.push(
        new Promise<void>((resolve) => {
          this.#nodeWrites.push(`register node ${node.name}`, () => this.#register(node).finally(resolve));
        }),
      );
    }
    await Promise.all(done);
    await this.#nodeWrites.idle();
    const missing = [...this.#nodes.values()].filter((n) => n.uid === undefined).map((n) => n.name);
    if (missing.length > 0 && !this.#stopped) throw new Error(`${missing.length} node(s) could not be registered (first: ${missing[0]})`);
  }

  async #register(node: SimNode): Promise<void> {
    const { client, naming, shape } = this.#o;
    const desired = nodeObject(naming, shape, node.index, node.name, Date.now());
    try {
      node.node = await client.create<Node>(NODES, desired);
    } catch (err) {
      if (!isApiError(err) || err.code !== 409) throw err;
      // There from an earlier run: take it over, labels and status ours again.
      await client.patch<Node>(NODES, { name: node.name, patch: { metadata: { labels: desired.metadata.labels } } });
      node.node = await client.patch<Node>(NODES, { name: node.name, subresource: "status", patch: { status: desired.status } });
    }
    node.uid = node.node.metadata.uid;
    this.stats.statusWrites++;
  }

  #startHeartbeats(node: SimNode): void {
    const renewMs = this.#o.leaseDurationSeconds * 250;
    const random = this.#o.random;
    // The first renewal is spread over one period, so N nodes write N/10 leases a second rather than N at once.
    const scheduleLease = (delay: number) => {
      node.leaseTimer = setTimeout(() => {
        this.#nodeWrites.push(`lease ${node.name}`, () => this.#renewLease(node));
        scheduleLease(renewMs * (1 + LEASE_JITTER * random()));
      }, delay);
      node.leaseTimer.unref?.();
    };
    scheduleLease(random() * renewMs);
    const scheduleStatus = (delay: number) => {
      node.statusTimer = setTimeout(() => {
        this.#nodeWrites.push(`status of node ${node.name}`, () => this.#reportStatus(node));
        scheduleStatus(this.#o.statusReportMs * (1 + LEASE_JITTER * random()));
      }, delay);
      node.statusTimer.unref?.();
    };
    scheduleStatus(this.#o.statusReportMs * (0.5 + 0.5 * random()));
  }

  async #renewLease(node: SimNode): Promise<void> {
    const { client, naming, leaseDurationSeconds } = this.#o;
    const now = Date.now();
    if (node.lease !== undefined) {
      const renewed: Lease = { ...node.lease, spec: { ...node.lease.spec, holderIdentity: node.name, leaseDurationSeconds, renewTime: leaseObject(naming, node.name, node.uid, leaseDurationSeconds, now).spec!.renewTime! } };
      try {
        node.lease = await client.update<Lease>(this.#leases, renewed);
        this.stats.leaseWrites++;
        return;
      } catch (err) {
        // Someone else wrote it (a restart of ours, an operator): read it again on the next try.
        if (!isApiError(err) || (err.code !== 409 && err.code !== 404)) throw err;
        node.lease = undefined;
      }
    }
    const fresh = leaseObject(naming, node.name, node.uid, leaseDurationSeconds, now);
    try {
      node.lease = await client.create<Lease>(this.#leases, fresh);
    } catch (err) {
      if (!isApiError(err) || err.code !== 409) throw err;
      const current = await client.get<Lease>(this.#leases, { namespace: naming.nodeLeaseNamespace, name: node.name });
      node.lease = await client.update<Lease>(this.#leases, { ...current, spec: fresh.spec });
    }
    this.stats.leaseWrites++;
  }

  async #reportStatus(node: SimNode): Promise<void> {
    const status = nodeStatus(this.#o.shape, node.index, node.name, nodeConditions(node.node?.status?.conditions, Date.now()));
    node.node = await this.#o.client.patch<Node>(NODES, { name: node.name, subresource: "status", patch: { status } });
    this.stats.statusWrites++;
  }

  // ---- pods ----

  #onPod(pod: Pod): void {
    if (this.#stopped) return;
    const node = this.#nodes.get(pod.spec?.nodeName ?? "");
    const uid = pod.metadata.uid;
    if (node === undefined || uid === undefined) return;
    let state = this.#pods.get(uid);
    if (state === undefined) {
      state = { node, stage: "pending" };
      this.#pods.set(uid, state);
      // Already Running when we started (a restart of the simulator): its address is taken.
      const ip = pod.status?.podIP;
      if (ip && node.ips.claim(ip)) state.ip = ip;
    }
    if (pod.metadata.deletionTimestamp) return this.#onMarked(pod, state);
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") {
      state.stage = "succeeded";
      return;
    }
    if (phase === "Running") {
      if (state.stage === "pending") {
        state.stage = "running";
        this.#scheduleSuccess(pod, state, Date.parse(pod.status?.startTime ?? "") || Date.now());
      }
      return;
    }
    if (state.stage !== "pending") return;
    state.stage = "starting";
    this.#after(state, this.#o.stages.podRunning, () => this.#podWrites.push(`pod ${key(pod)} running`, () => this.#markRunning(pod, state)));
  }

  #onMarked(pod: Pod, state: SimPod): void {
    if (state.stage === "deleting") return;
    state.stage = "deleting";
    clearTimeout(state.timer);
    state.timer = undefined;
    this.#after(state, this.#o.stages.podDelete, () =>
      this.#podWrites.push(`delete pod ${key(pod)}`, async () => {
        try {
          await this.#o.client.delete(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid! } });
          this.stats.podsDeleted++;
        } catch (err) {
          // Gone already, or a new pod of the same name: nothing of ours to finish.
          if (!isApiError(err) || (err.code !== 404 && err.code !== 409)) throw err;
        }
      }),
    );
  }

  #onPodGone(pod: Pod): void {
    const state = this.#pods.get(pod.metadata.uid ?? "");
    if (state === undefined) return;
    clearTimeout(state.timer);
    if (state.ip !== undefined) state.node.ips.release(state.ip);
    this.#pods.delete(pod.metadata.uid!);
  }

  async #markRunning(pod: Pod, state: SimPod): Promise<void> {
    if (state.stage !== "starting" || this.#pods.get(pod.metadata.uid!) !== state) return;
    state.ip ??= state.node.ips.take();
    if (state.ip === undefined) throw new Error(`node ${state.node.name} has no pod address left in ${podCIDR(state.node.index)}`);
    const now = Date.now();
    try {
      await this.#o.client.patch(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, subresource: "status", patch: { status: runningStatus(pod, nodeIP(state.node.index), state.ip, now) } });
    } catch (err) {
      if (isApiError(err) && (err.code === 404 || err.code === 409)) return; // deleted (or replaced) meanwhile
      throw err;
    }
    this.stats.podsRunning++;
    if (state.stage !== "starting") return; // marked for deletion meanwhile
    state.stage = "running";
    this.#scheduleSuccess(pod, state, now);
  }

  #scheduleSuccess(pod: Pod, state: SimPod, startedAt: number): void {
    const own = succeedAfterMs(pod.metadata.annotations);
    const stage: Stage | undefined = own !== undefined ? { delayMs: own, jitterMs: 0 } : this.#o.stages.podSucceeded;
    if (stage === undefined) return;
    const wait = Math.max(0, startedAt + stageWaitMs(stage, this.#o.random) - Date.now());
    state.timer = setTimeout(() => {
      state.timer = undefined;
      this.#podWrites.push(`pod ${key(pod)} succeeded`, () => this.#markSucceeded(pod, state));
    }, wait);
    state.timer.unref?.();
  }

  async #markSucceeded(pod: Pod, state: SimPod): Promise<void> {
    if (state.stage !== "running" || this.#pods.get(pod.metadata.uid!) !== state) return;
    // The pod as it is now (the stored object carries the running statuses' start times).
    try {
      await this.#o.client.patch(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, subresource: "status", patch: { status: succeededStatus(pod, Date.now()) } });
    } catch (err) {
      if (isApiError(err) && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
    this.stats.podsSucceeded++;
    if (state.stage === "running") state.stage = "succeeded";
  }

  /** Runs `fn` after the stage's wait (at once when it is zero). */
  #after(state: SimPod, stage: Stage, fn: () => void): void {
    const wait = stageWaitMs(stage, this.#o.random);
    if (wait <= 0) return fn();
    state.timer = setTimeout(() => {
      state.timer = undefined;
      fn();
    }, wait);
    state.timer.unref?.();
  }
}

function key(pod: Pod): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}
