// A pod as the runtime has it: its sandboxes (newest first) and every
// container with its detailed status, found by the pod-uid label. Pod workers
// read it before acting; the status builder turns it into the API status.

import type { Container, ContainerStatus, CriClient, PodSandbox, PodSandboxStatus } from "../cri/index.js";
import type { RuntimeLabels } from "./labels.js";
import { terminationMessage } from "./termination-message.js";

/** A container's status plus the sandbox it belongs to (which the status call does not say). */
export interface RuntimeContainer extends ContainerStatus {
  podSandboxId: string;
}

export interface RuntimePod {
  uid: string;
  /** Newest first. */
  sandboxes: PodSandboxStatus[];
  /** Every container of the pod, newest first. */
  containers: RuntimeContainer[];
}

export async function fetchRuntimePod(runtime: CriClient, labels: RuntimeLabels, uid: string): Promise<RuntimePod> {
  return new RuntimePodReader(runtime, labels).read(uid);
}

/** What one relist saw: when its lists were asked for, and each pod's items by uid. */
interface Snapshot {
  at: number;
  pods: Map<string, { sandboxes: PodSandbox[]; containers: Container[] }>;
}

/**
 * How long a sync's first read waits for the PLEG's next relist when the last
 * one began before the pod's previous sync ended (upstream's pod workers wait
 * on the pod cache the same way): the sync after a pod started, woken by the
 * PLEG event of its own start, then costs no filtered ListPodSandbox +
 * ListContainers of its own (two HTTP/2 streams per pod start). Two of the
 * PLEG's one-second periods; past that the read lists the pod itself.
 */
export const RELIST_WAIT_MS = 2_000;

interface Cached<S> {
  status: S;
  /** The relist (or read) that last saw the id, for eviction. */
  seenAt: number;
}

/**
 * Reads pods from the runtime with fewer round trips, as upstream's pod cache
 * does: (1) the PLEG hands over each relist's lists (`observeRelist`), and a
 * read that allows it (`notBefore`: the relist must have been asked for after
 * that time, for a pod worker the end of its last sync) takes the pod's
 * sandboxes and containers from there instead of two filtered lists; (2) the
 * detailed status of a container or sandbox is kept and reused while the
 * lists show it in the same state (a CRI status changes with the state: a
 * container's exit, a sandbox's stop; the termination message is read once,
 * at the exit). The status calls that remain are for new or changed ids.
 */
export class RuntimePodReader {
  readonly #runtime: CriClient;
  readonly #labels: RuntimeLabels;
  #snapshot: Snapshot | undefined;
  readonly #containers = new Map<string, Cached<RuntimeContainer>>();
  readonly #sandboxes = new Map<string, Cached<PodSandboxStatus>>();

  /** Reads waiting for a relist asked for after `notBefore`, and when they give up and list themselves. */
  readonly #waiting = new Set<{ notBefore: number; wake: () => void }>();
  readonly #relistWaitMs: number;

  /** `relistWaitMs`: how long a read waits for the next relist before listing the pod itself. */
  constructor(runtime: CriClient, labels: RuntimeLabels, relistWaitMs = RELIST_WAIT_MS) {
    this.#runtime = runtime;
    this.#labels = labels;
    this.#relistWaitMs = relistWaitMs;
  }

  /** A relist's lists, asked for at `at` (performance.now()). Forgets the statuses of ids gone from the runtime; returns the uids of the pods listed. */
  observeRelist(at: number, sandboxes: PodSandbox[], containers: Container[]): Set<string> {
    const pods = new Map<string, { sandboxes: PodSandbox[]; containers: Container[] }>();
    const podOf = (uid: string) => {
      let p = pods.get(uid);
      if (p === undefined) pods.set(uid, (p = { sandboxes: [], containers: [] }));
      return p;
    };
    const key = this.#labels.podUid;
    for (const s of sandboxes) {
      const uid = s.labels[key];
      if (uid) podOf(uid).sandboxes.push(s);
    }
    for (const c of containers) {
      const uid = c.labels[key];
      if (uid) podOf(uid).containers.push(c);
    }
    if (this.#snapshot === undefined || at >= this.#snapshot.at) this.#snapshot = { at, pods };
    for (const w of this.#waiting) if (at > w.notBefore) w.wake();
    const seen = new Set<string>([...sandboxes.map((s) => s.id), ...containers.map((c) => c.id)]);
    for (const cache of [this.#containers, this.#sandboxes] as Map<string, Cached<unknown>>[]) {
      for (const [id, entry] of cache) if (!seen.has(id) && entry.seenAt < at) cache.delete(id);
    }
    return new Set(pods.keys());
  }

  /**
   * The pod as the runtime has it. With `notBefore` (performance.now() time),
   * a relist asked for after it answers for the lists (once relists run, the
   * read waits up to relistWaitMs for one); without, or with none that
   * recent, the runtime is listed now.
   */
  async read(uid: string, notBefore?: number): Promise<RuntimePod> {
    // Relists are running (one was seen) but the last began before notBefore: wait for the next rather than list now.
    if (notBefore !== undefined && this.#snapshot !== undefined && this.#snapshot.at <= notBefore) await this.#relistAfter(notBefore);
    const snapshot = this.#snapshot;
    const now = performance.now();
    let items: PodSandbox[];
    let containers: Container[];
    if (notBefore !== undefined && snapshot !== undefined && snapshot.at > notBefore) {
      ({ sandboxes: items, containers } = snapshot.pods.get(uid) ?? { sandboxes: [], containers: [] });
    } else {
      const selector = { [this.#labels.podUid]: uid };
      [{ items }, { containers }] = await Promise.all([
        this.#runtime.listPodSandbox({ filter: { labelSelector: selector } }),
        this.#runtime.listContainers({ filter: { labelSelector: selector } }),
      ]);
    }
    const sandboxes = await Promise.all([...items].sort((a, b) => b.createdAt - a.createdAt).map((s) => this.#sandboxStatus(s, now)));
    return { uid, sandboxes: sandboxes.filter((s) => s !== null), containers: await this.#containerStatuses(containers, now) };
  }

  /**
   * The pod's containers read again after a pass that created, started or
   * stopped some: `touched` maps each container id the pass acted on to its
   * sandbox; only those are asked for their status (the others are as `pod`
   * had them, and the PLEG notices one that changed meanwhile), so a pod
   * start costs one ContainerStatus here rather than a filtered
   * ListContainers plus the status (each call an HTTP/2 stream, the largest
   * share of the agent's CPU per pod start). A touched id the runtime no
   * longer has is dropped; sandboxes stay as `pod` had them.
   */
  async rereadContainers(pod: RuntimePod, touched: ReadonlyMap<string, string>): Promise<RuntimePod> {
    const now = performance.now();
    const kept = pod.containers.filter((c) => !touched.has(c.id));
    const fresh = await Promise.all([...touched].map(([id, podSandboxId]) => this.#fetchContainerStatus(id, podSandboxId, now)));
    const containers = [...kept, ...fresh.filter((s): s is RuntimeContainer => s !== undefined)].sort((a, b) => b.createdAt - a.createdAt);
    return { uid: pod.uid, sandboxes: pod.sandboxes, containers };
  }

  /** Resolves once a relist asked for after `notBefore` was observed, or after relistWaitMs (the caller then lists). */
  #relistAfter(notBefore: number): Promise<void> {
    return new Promise((resolve) => {
      const waiter = { notBefore, wake: () => {} };
      const timer = setTimeout(() => waiter.wake(), this.#relistWaitMs);
      waiter.wake = () => {
        clearTimeout(timer);
        this.#waiting.delete(waiter);
        resolve();
      };
      this.#waiting.add(waiter);
    });
  }

  /** A sandbox's status by id (a sandbox just made), remembered as a listed one's. */
  async sandboxStatus(podSandboxId: string): Promise<PodSandboxStatus | null> {
    const status = (await this.#runtime.podSandboxStatus({ podSandboxId })).status;
    if (status) this.#sandboxes.set(podSandboxId, { status, seenAt: performance.now() });
    return status;
  }

  async #containerStatuses(containers: Container[], now: number): Promise<RuntimeContainer[]> {
    const statuses = await Promise.all(containers.map((c) => this.#containerStatus(c, now)));
    return statuses.filter((s): s is RuntimeContainer => s !== undefined).sort((a, b) => b.createdAt - a.createdAt);
  }

  async #sandboxStatus(s: PodSandbox, now: number): Promise<PodSandboxStatus | null> {
    const cached = this.#sandboxes.get(s.id);
    if (cached !== undefined && cached.status.state === s.state) {
      cached.seenAt = now;
      return cached.status;
    }
    return this.sandboxStatus(s.id);
  }

  async #containerStatus(c: Container, now: number): Promise<RuntimeContainer | undefined> {
    const cached = this.#containers.get(c.id);
    if (cached !== undefined && cached.status.state === c.state) {
      cached.seenAt = now;
      return cached.status;
    }
    return this.#fetchContainerStatus(c.id, c.podSandboxId, now);
  }

  /** A container's status from the runtime (and its termination message once exited), remembered; undefined once it is gone. */
  async #fetchContainerStatus(containerId: string, podSandboxId: string, now: number): Promise<RuntimeContainer | undefined> {
    try {
      const status = (await this.#runtime.containerStatus({ containerId })).status;
      if (!status) return undefined;
      if (status.state === "CONTAINER_EXITED") {
        // The application's message follows the runtime's (upstream's "<runtime message>: <termination message>").
        const annotations = status.annotations ?? {};
        const own = await terminationMessage(status, annotations[this.#labels.terminationMessagePath] ?? "", annotations[this.#labels.terminationMessagePolicy] ?? "");
        if (own !== "") status.message = status.message ? `${status.message}: ${own}` : own;
      }
      const full = { ...status, podSandboxId };
      this.#containers.set(containerId, { status: full, seenAt: now });
      return full;
    } catch {
      return undefined; // removed since it was listed or acted on
    }
  }
}

/** The newest container named `name` (optionally in one sandbox). */
export function latestContainer(pod: RuntimePod, name: string, sandboxId?: string): RuntimeContainer | undefined {
  return pod.containers.find((c) => c.metadata?.name === name && (sandboxId === undefined || c.podSandboxId === sandboxId));
}
