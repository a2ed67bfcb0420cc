// The density pipeline as a timeline: when each pod was created (by the
// ReplicaSet controller), bound (spec.nodeName set by the scheduler), reported
// Running by the simulator, and when the Deployments' readyReplicas (the
// status the bench's clock waits for) caught up. Fed by one pod watch and the
// bench's Deployment poll; printed per interval as rates so the stage that
// limits throughput shows (bench/density --timeline).

import type { RestClient } from "../../src/client/index.js";
import { PODS } from "../../src/api/resource-refs.js";

export const STAGES = ["created", "bound", "running", "ready (Deployment status)"] as const;
export type Stage = (typeof STAGES)[number];

interface PodLike {
  metadata?: { uid?: string; name?: string };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

/** Per-stage cumulative counts with the time (ms from the start) each count was reached. */
export class Timeline {
  readonly #events = new Map<Stage, number[]>(STAGES.map((s) => [s, []]));
  readonly #seen = new Map<string, Set<Stage>>();
  #readyMax = 0;

  constructor(readonly startMs: number) {}

  /** One pod as observed by the watch at `nowMs` (performance.now()). */
  observePod(pod: PodLike, nowMs: number): void {
    const uid = pod.metadata?.uid ?? pod.metadata?.name;
    if (uid === undefined) return;
    let seen = this.#seen.get(uid);
    if (seen === undefined) this.#seen.set(uid, (seen = new Set()));
    const mark = (stage: Stage) => {
      if (seen!.has(stage)) return;
      seen!.add(stage);
      this.#events.get(stage)!.push(nowMs - this.startMs);
    };
    mark("created");
    if (pod.spec?.nodeName) mark("bound");
    if (pod.status?.phase === "Running") mark("running");
  }

  /** The Deployments' summed readyReplicas at `nowMs` (only increases count). */
  observeReady(ready: number, nowMs: number): void {
    for (; this.#readyMax < ready; this.#readyMax++) this.#events.get("ready (Deployment status)")!.push(nowMs - this.startMs);
  }

  /** Rows of [interval end in s, per-stage rate over the interval (per s), per-stage cumulative]. */
  rows(intervalMs: number, untilMs: number): { t: number; rate: number[]; total: number[] }[] {
    const out: { t: number; rate: number[]; total: number[] }[] = [];
    const sorted = STAGES.map((s) => [...this.#events.get(s)!].sort((a, b) => a - b));
    const idx = STAGES.map(() => 0);
    for (let end = intervalMs; end < untilMs + intervalMs; end += intervalMs) {
      const rate: number[] = [];
      const total: number[] = [];
      sorted.forEach((times, i) => {
        const from = idx[i]!;
        while (idx[i]! < times.length && times[idx[i]!]! < end) idx[i]!++;
        rate.push(((idx[i]! - from) * 1000) / intervalMs);
        total.push(idx[i]!);
      });
      out.push({ t: end / 1000, rate, total });
    }
    return out;
  }

  format(intervalMs: number, untilMs: number): string {
    const head = `${"t (s)".padStart(6)} | ${STAGES.map((s) => `${s} /s (total)`.padStart(s.length + 13)).join(" | ")}`;
    const lines = this.rows(intervalMs, untilMs).map((r) =>
      `${String(r.t).padStart(6)} | ${r.rate.map((v, i) => `${v.toFixed(1)} (${r.total[i]})`.padStart(STAGES[i]!.length + 13)).join(" | ")}`);
    return [head, ...lines].join("\n");
  }
}

/**
 * Watches the namespace's pods into `timeline` until the returned stop() is
 * called. A watch the server ends (or breaks) is opened again from a fresh
 * list; pods seen first in that list count at the list's time.
 */
export async function watchPods(client: RestClient, namespace: string, timeline: Timeline): Promise<() => void> {
  let stopped = false;
  let current: { close(): void } | undefined;
  const open = async () => {
    const list = await client.list(PODS, { namespace });
    for (const p of list.items) timeline.observePod(p as PodLike, performance.now());
    return client.watch(PODS, { namespace, resourceVersion: list.metadata.resourceVersion });
  };
  let first: Awaited<ReturnType<typeof open>> | undefined = await open();
  void (async () => {
    while (!stopped) {
      try {
        const watch = first ?? (await open());
        first = undefined;
        current = watch;
        if (stopped) watch.close();
        for await (const ev of watch) {
          if (ev.type === "ADDED" || ev.type === "MODIFIED") timeline.observePod(ev.object as PodLike, performance.now());
        }
      } catch {
        // an ERROR event or a broken stream: list and watch again
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return () => {
    stopped = true;
    current?.close();
  };
}
