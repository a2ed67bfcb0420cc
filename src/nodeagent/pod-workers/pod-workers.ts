// Pod workers (seed 001, "What the service does" 2–3): one serialized worker
// per pod uid moving through syncing → terminating → terminated. Updates and
// wake-ups coalesce: a busy worker runs once more when it finishes, never
// twice at once. A pod whose containers finished for good terminates too,
// but keeps its containers until it is deleted.

import type { Pod } from "../../api/core/types.js";

export type WorkerState = "syncing" | "terminating" | "terminated";

export interface PodSyncFunctions {
  /** done: nothing runs again; gracePeriodSeconds with it: the containers still running are stopped within it (default 0). */
  syncPod(pod: Pod): Promise<{ requeueAfterMs?: number; done?: boolean; gracePeriodSeconds?: number }>;
  syncTerminatingPod(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  syncTerminatedPod(pod: Pod, options: { remove: boolean }): Promise<void>;
  /** After every pass of a worker (status updates). */
  afterSync?(pod: Pod, state: WorkerState): Promise<void>;
  /** The worker is gone: containers removed, the pod may be forgotten (and deleted from the API). */
  onRemoved?(pod: Pod): void;
}

interface Worker {
  pod: Pod;
  state: WorkerState;
  pending: boolean;
  running: boolean;
  /** Set once a kill was asked for: the grace period, and whether to remove everything afterwards. */
  kill: { grace: number; remove: boolean } | undefined;
  cleaned: boolean;
  /** The pod left its source (kill): no update can come for it any more. */
  left: boolean;
  timer: NodeJS.Timeout | undefined;
  idle: (() => void)[];
}

export interface PodWorkersOptions {
  sync: PodSyncFunctions;
  log?: (line: string) => void;
  /** Wait after a failed pass before trying again (default 1 s). */
  retryMs?: number;
}

export class PodWorkers {
  readonly #o: PodWorkersOptions;
  readonly #workers = new Map<string, Worker>();
  /**
   * Pods whose worker finished (containers removed) while their source still
   * had them: the deleted API pod until its DELETED event comes. An update
   * that arrives meanwhile (the agent's own status write coming back) is
   * ignored, as upstream's pod workers ignore updates of a finished pod;
   * without this it started a second worker that held the pod's devices and
   * resources until it too terminated.
   */
  readonly #finished = new Set<string>();
  #stopped = false;

  constructor(options: PodWorkersOptions) {
    this.#o = options;
  }

  /** A new or changed pod; a deletion timestamp starts graceful termination. */
  update(pod: Pod): void {
    const uid = pod.metadata.uid!;
    if (this.#finished.has(uid)) return;
    let w = this.#workers.get(uid);
    if (!w) {
      w = { pod, state: "syncing", pending: false, running: false, kill: undefined, cleaned: false, left: false, timer: undefined, idle: [] };
      this.#workers.set(uid, w);
    }
    w.pod = pod;
    if (pod.metadata.deletionTimestamp) this.#requestKill(w, pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30, true);
    this.#schedule(w);
  }

  /** A newer object of the pod that needs no sync (only its status changed): the next pass uses it. */
  refresh(pod: Pod): void {
    const w = this.#workers.get(pod.metadata.uid!);
    if (w) w.pod = pod;
  }

  /** The pod left its source (deleted, or its static file removed): terminate it and remove its containers. */
  kill(uid: string, gracePeriodSeconds: number): void {
    const w = this.#workers.get(uid);
    if (!w) {
      this.#finished.delete(uid);
      return;
    }
    w.left = true;
    this.#requestKill(w, gracePeriodSeconds, true);
    this.#schedule(w);
  }

  /** Something about the pod changed in the runtime or its probes: sync it again. */
  wake(uid: string): void {
    const w = this.#workers.get(uid);
    if (w) this.#schedule(w);
  }

  state(uid: string): WorkerState | undefined {
    return this.#workers.get(uid)?.state;
  }

  pods(): Pod[] {
    return [...this.#workers.values()].map((w) => w.pod);
  }

  /** Pods that count against the node (not yet terminated). */
  activePods(): Pod[] {
    return [...this.#workers.values()].filter((w) => w.state !== "terminated").map((w) => w.pod);
  }

  has(uid: string): boolean {
    return this.#workers.has(uid);
  }

  /** Resolves when the worker of `uid` has no pass running or pending. */
  idle(uid: string): Promise<void> {
    const w = this.#workers.get(uid);
    if (!w || (!w.running && !w.pending)) return Promise.resolve();
    return new Promise((r) => w.idle.push(r));
  }

  stop(): void {
    this.#stopped = true;
    for (const w of this.#workers.values()) clearTimeout(w.timer);
  }

  #requestKill(w: Worker, grace: number, remove: boolean): void {
    // A shorter grace period than the one already asked for wins, as upstream.
    w.kill = { grace: w.kill ? Math.min(w.kill.grace, grace) : grace, remove: remove || (w.kill?.remove ?? false) };
  }

  #schedule(w: Worker): void {
    if (this.#stopped) return;
    clearTimeout(w.timer);
    w.timer = undefined;
    w.pending = true;
    if (!w.running) void this.#run(w);
  }

  async #run(w: Worker): Promise<void> {
    w.running = true;
    const { sync, log } = this.#o;
    while (w.pending && !this.#stopped) {
      w.pending = false;
      const uid = w.pod.metadata.uid!;
      try {
        if (w.state === "syncing") {
          if (w.kill) w.state = "terminating";
          else {
            const r = await sync.syncPod(w.pod);
            if (r.done) {
              w.state = "terminating";
              if (r.gracePeriodSeconds !== undefined) this.#requestKill(w, r.gracePeriodSeconds, false);
            }
            else if (r.requeueAfterMs !== undefined) this.#later(w, r.requeueAfterMs);
          }
        }
        if (w.state === "terminating") {
          await sync.syncTerminatingPod(w.pod, w.kill?.grace ?? 0);
          w.state = "terminated";
        }
        if (w.state === "terminated" && (!w.cleaned || w.kill?.remove)) {
          const remove = w.kill?.remove ?? false;
          await sync.syncTerminatedPod(w.pod, { remove });
          w.cleaned = true;
          if (remove) {
            clearTimeout(w.timer);
            this.#workers.delete(uid);
            if (!w.left) this.#finished.add(uid);
            await sync.afterSync?.(w.pod, w.state);
            sync.onRemoved?.(w.pod);
            break;
          }
        }
        await sync.afterSync?.(w.pod, w.state);
      } catch (err) {
        log?.(`pod ${w.pod.metadata.namespace}/${w.pod.metadata.name} (${uid}): ${w.state}: ${(err as Error).message}`);
        this.#later(w, this.#o.retryMs ?? 1_000);
      }
    }
    w.running = false;
    for (const r of w.idle.splice(0)) r();
  }

  #later(w: Worker, ms: number): void {
    if (this.#stopped) return;
    clearTimeout(w.timer);
    w.timer = setTimeout(() => this.#schedule(w), Math.max(ms, 10));
    w.timer.unref?.();
  }
}
