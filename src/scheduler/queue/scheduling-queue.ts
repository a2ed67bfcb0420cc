// The scheduling queue, as upstream's: activeQ (a heap by priority, then
// arrival), backoffQ (pods waiting out 1 s doubling to 10 s after a failure),
// the unschedulable pool (pods no node fits; moved back when a cluster event
// concerns a plugin that rejected them, or after 5 minutes at most) and gated
// pods (spec.schedulingGates not yet empty). Time comes from a clock, so
// tests drive it.

import type { ClusterEvent } from "../framework/interface.js";
import { PodInfo } from "../framework/pod-info.js";
import type { Pod } from "../../api/core/types.js";
import { KeyedHeap } from "./heap.js";

export interface Clock {
  now(): number;
}

export const realClock: Clock = { now: () => Date.now() };

export type QueueName = "active" | "backoff" | "unschedulable" | "gated";

export interface QueuedPodInfo {
  podInfo: PodInfo;
  readonly key: string;
  /** When it last entered the queue (orders equal priorities; starts backoff). */
  timestamp: number;
  /** When it was first seen, for the end-to-end scheduling SLI. */
  readonly initialAttemptTimestamp: number;
  attempts: number;
  /** Plugins that rejected it last time: only their events move it. */
  unschedulablePlugins: Set<string>;
  gated: boolean;
}

export interface QueueMetrics {
  pending(queue: QueueName, count: number): void;
  incoming(queue: QueueName, event: string): void;
}

export interface SchedulingQueueOptions {
  clock?: Clock;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Longest a pod stays in the unschedulable pool without a relevant event (default 5 min). */
  maxInUnschedulableMs?: number;
  /** Which plugins an event concerns (the framework's map). */
  pluginsFor?: (event: ClusterEvent) => ReadonlySet<string>;
  metrics?: QueueMetrics;
}

export class SchedulingQueue {
  readonly #clock: Clock;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #maxInUnschedulableMs: number;
  readonly #pluginsFor: (event: ClusterEvent) => ReadonlySet<string>;
  readonly #metrics: QueueMetrics | undefined;
  readonly #active = new KeyedHeap<QueuedPodInfo>(
    (q) => q.key,
    (a, b) => (a.podInfo.priority !== b.podInfo.priority ? a.podInfo.priority > b.podInfo.priority : a.timestamp < b.timestamp),
  );
  readonly #backoff = new KeyedHeap<QueuedPodInfo>(
    (q) => q.key,
    (a, b) => this.#backoffExpiry(a) < this.#backoffExpiry(b),
  );
  readonly #unschedulable = new Map<string, QueuedPodInfo>();
  readonly #gated = new Map<string, QueuedPodInfo>();
  /** Popped and not yet back (being scheduled or bound). */
  readonly #inFlight = new Map<string, QueuedPodInfo>();
  #waiters: (() => void)[] = [];
  #schedulingCycle = 0;
  /** The cycle during which the last move request came: pods failing in it go to backoff, not unschedulable. */
  #moveRequestCycle = -1;
  #closed = false;

  constructor(options: SchedulingQueueOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#initialBackoffMs = options.initialBackoffMs ?? 1000;
    this.#maxBackoffMs = options.maxBackoffMs ?? 10_000;
    this.#maxInUnschedulableMs = options.maxInUnschedulableMs ?? 5 * 60_000;
    this.#pluginsFor = options.pluginsFor ?? (() => new Set());
    this.#metrics = options.metrics;
  }

  get schedulingCycle(): number {
    return this.#schedulingCycle;
  }

  /** Where the pod is, if queued. */
  where(key: string): QueueName | "in-flight" | undefined {
    if (this.#active.has(key)) return "active";
    if (this.#backoff.has(key)) return "backoff";
    if (this.#unschedulable.has(key)) return "unschedulable";
    if (this.#gated.has(key)) return "gated";
    return this.#inFlight.has(key) ? "in-flight" : undefined;
  }

  counts(): Record<QueueName, number> {
    return { active: this.#active.size, backoff: this.#backoff.size, unschedulable: this.#unschedulable.size, gated: this.#gated.size };
  }

  /** A new pending pod. */
  add(pod: Pod): void {
    const pi = new PodInfo(pod);
    if (this.where(pi.key) !== undefined) return this.update(pod);
    const now = this.#clock.now();
    const q: QueuedPodInfo = { podInfo: pi, key: pi.key, timestamp: now, initialAttemptTimestamp: now, attempts: 0, unschedulablePlugins: new Set(), gated: false };
    this.#enqueueNew(q, "PodAdd");
  }

  #enqueueNew(q: QueuedPodInfo, event: string): void {
    if (isGated(q.podInfo.pod)) {
      q.gated = true;
      this.#gated.set(q.key, q);
      this.#changed("gated", event);
    } else {
      q.gated = false;
      this.#pushActive(q, event);
    }
  }

  /** The pod changed (still pending). */
  update(pod: Pod): void {
    const pi = new PodInfo(pod);
    const key = pi.key;
    const inFlight = this.#inFlight.get(key);
    if (inFlight !== undefined) {
      inFlight.podInfo = pi;
      return;
    }
    for (const heap of [this.#active, this.#backoff]) {
      const q = heap.get(key);
      if (q !== undefined) {
        q.podInfo = pi;
        heap.push(q);
        return;
      }
    }
    const gated = this.#gated.get(key);
    if (gated !== undefined) {
      gated.podInfo = pi;
      if (!isGated(pod)) {
        this.#gated.delete(key);
        gated.gated = false;
        gated.timestamp = this.#clock.now();
        this.#pushActive(gated, "PodUpdate");
      }
      return;
    }
    const q = this.#unschedulable.get(key);
    if (q === undefined) return this.add(pod);
    const old = q.podInfo.pod;
    q.podInfo = pi;
    if (isGated(pod)) {
      // Gates can only be removed, but a pod seen late may carry them: keep it aside.
      this.#unschedulable.delete(key);
      this.#enqueueNew(q, "PodUpdate");
      return;
    }
    // A change to what scheduling reads may let it fit now (upstream: isPodUpdated, ignoring status and bookkeeping).
    if (JSON.stringify(old.spec) !== JSON.stringify(pod.spec) || JSON.stringify(old.metadata.labels) !== JSON.stringify(pod.metadata.labels)) {
      this.#unschedulable.delete(key);
      this.#moveOut(q, "PodUpdate");
    } else this.#report();
  }

  delete(key: string): void {
    this.#active.delete(key);
    this.#backoff.delete(key);
    this.#unschedulable.delete(key);
    this.#gated.delete(key);
    this.#inFlight.delete(key);
    this.#report();
  }

  /** The next pod to schedule (highest priority, then oldest); undefined once the signal fires. */
  async pop(signal: AbortSignal): Promise<QueuedPodInfo | undefined> {
    while (this.#active.size === 0) {
      if (signal.aborted || this.#closed) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.#waiters.push(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
    return this.popNow();
  }

  /** pop() without waiting. */
  popNow(): QueuedPodInfo | undefined {
    const q = this.#active.pop();
    if (q === undefined) return undefined;
    q.attempts++;
    this.#schedulingCycle++;
    this.#inFlight.set(q.key, q);
    this.#report();
    return q;
  }

  /** Scheduled (assumed and sent for binding), or dropped: it leaves the queue. */
  done(key: string): void {
    this.#inFlight.delete(key);
  }

  /**
   * No node fits: the pod waits for a relevant event, or for its backoff if
   * an event arrived while it was being scheduled (it may have missed it).
   */
  addUnschedulable(q: QueuedPodInfo, cycle: number): void {
    if (!this.#inFlight.delete(q.key)) return; // deleted or bound meanwhile
    q.timestamp = this.#clock.now();
    if (this.#moveRequestCycle >= cycle) {
      this.#backoff.push(q);
      this.#changed("backoff", "ScheduleAttemptFailure");
    } else {
      this.#unschedulable.set(q.key, q);
      this.#changed("unschedulable", "ScheduleAttemptFailure");
    }
  }

  /** An error (a failed binding, an API error): retry after backoff. */
  addBackoff(q: QueuedPodInfo): void {
    if (!this.#inFlight.delete(q.key)) return;
    q.timestamp = this.#clock.now();
    this.#backoff.push(q);
    this.#changed("backoff", "ScheduleAttemptFailure");
  }

  /** A cluster event: unschedulable pods rejected by a plugin it concerns go back to backoff or active. */
  moveOnEvent(event: ClusterEvent): void {
    const plugins = this.#pluginsFor(event);
    let moved = false;
    for (const [key, q] of this.#unschedulable) {
      if (q.unschedulablePlugins.size > 0 && !intersects(q.unschedulablePlugins, plugins)) continue;
      this.#unschedulable.delete(key);
      this.#moveOut(q, event, false);
      moved = true;
    }
    this.#moveRequestCycle = this.#schedulingCycle;
    if (moved) this.#report();
  }

  /** Moves pods whose backoff has passed to activeQ (call every second). */
  flushBackoffCompleted(): void {
    const now = this.#clock.now();
    for (let q = this.#backoff.peek(); q !== undefined && this.#backoffExpiry(q) <= now; q = this.#backoff.peek()) {
      this.#backoff.pop();
      this.#pushActive(q, "BackoffComplete");
    }
  }

  /** Moves pods unschedulable for longer than the limit (call every 30 s). */
  flushUnschedulableLeftover(): void {
    const now = this.#clock.now();
    for (const [key, q] of this.#unschedulable) {
      if (now - q.timestamp < this.#maxInUnschedulableMs) continue;
      this.#unschedulable.delete(key);
      this.#moveOut(q, "UnschedulableTimeout");
    }
  }

  /** Runs the flush timers until the signal fires. */
  run(signal: AbortSignal): void {
    const backoff = setInterval(() => this.flushBackoffCompleted(), 1000);
    const leftover = setInterval(() => this.flushUnschedulableLeftover(), 30_000);
    backoff.unref();
    leftover.unref();
    signal.addEventListener(
      "abort",
      () => {
        clearInterval(backoff);
        clearInterval(leftover);
        this.close();
      },
      { once: true },
    );
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w();
  }

  backoffDurationMs(q: QueuedPodInfo): number {
    return Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** Math.max(0, q.attempts - 1));
  }

  #backoffExpiry(q: QueuedPodInfo): number {
    return q.timestamp + this.backoffDurationMs(q);
  }

  #moveOut(q: QueuedPodInfo, event: string, report = true): void {
    if (this.#backoffExpiry(q) > this.#clock.now()) {
      this.#backoff.push(q);
      this.#metrics?.incoming("backoff", event);
    } else {
      this.#active.push(q);
      this.#metrics?.incoming("active", event);
      this.#wake();
    }
    if (report) this.#report();
  }

  #pushActive(q: QueuedPodInfo, event: string): void {
    this.#active.push(q);
    this.#changed("active", event);
    this.#wake();
  }

  #changed(queue: QueueName, event: string): void {
    this.#metrics?.incoming(queue, event);
    this.#report();
  }

  #report(): void {
    if (this.#metrics === undefined) return;
    const c = this.counts();
    for (const name of ["active", "backoff", "unschedulable", "gated"] as const) this.#metrics.pending(name, c[name]);
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}

/** Without allocating: this runs for every unschedulable pod on every cluster event. */
function intersects(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) if (b.has(x)) return true;
  return false;
}

function isGated(pod: Pod): boolean {
  return (pod.spec?.schedulingGates ?? []).length > 0;
}
