// The pod lifecycle event generator (seed 001, "What the service does" 5;
// "Events" 1): relists the runtime every second, compares each pod's sandboxes
// and containers with the last relist, and wakes the pods that changed. Its
// last successful relist is the agent's health signal (Ready, watchdog).

import type { Container, CriClient, PodSandbox } from "../cri/index.js";
import type { RuntimeLabels } from "../runtime-pod/labels.js";

export type PlegEventType = "ContainerStarted" | "ContainerDied" | "ContainerRemoved" | "ContainerChanged" | "SandboxChanged";

export interface PlegEvent {
  uid: string;
  type: PlegEventType;
  id: string;
}

export interface PlegOptions {
  runtime: CriClient;
  labels: RuntimeLabels;
  onEvent: (event: PlegEvent) => void;
  /** Default 1 s. */
  periodMs?: number;
  /** Each successful relist's lists, asked for at `at` (performance.now()), before its events go out (the pod reader's snapshot). */
  onLists?: (at: number, sandboxes: PodSandbox[], containers: Container[]) => void;
  /** After each successful relist: its duration and the number of ready sandboxes (metrics). */
  onRelist?: (seconds: number, readySandboxes: number) => void;
  log?: (line: string) => void;
}

/** Upstream's relist threshold: a PLEG silent for 3 minutes makes the node not ready. */
export const RELIST_THRESHOLD_MS = 3 * 60_000;

export class Pleg {
  readonly #o: PlegOptions;
  /** id → [uid, state] from the last relist. */
  #containers = new Map<string, [string, string]>();
  #sandboxes = new Map<string, [string, string]>();
  #lastRelist = 0;
  #lastError: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: PlegOptions) {
    this.#o = options;
  }

  start(signal: AbortSignal): void {
    const period = this.#o.periodMs ?? 1_000;
    const loop = async () => {
      if (signal.aborted) return;
      await this.relist();
      if (!signal.aborted) this.#timer = setTimeout(() => void loop(), period);
    };
    signal.addEventListener("abort", () => clearTimeout(this.#timer), { once: true });
    void loop();
  }

  /** Healthy when the last relist succeeded within the threshold. */
  healthy(now = Date.now()): { ok: boolean; message: string } {
    if (this.#lastRelist === 0) return { ok: false, message: this.#lastError ?? "PLEG has not relisted yet" };
    const age = now - this.#lastRelist;
    return age <= RELIST_THRESHOLD_MS ? { ok: true, message: "" } : { ok: false, message: `PLEG is not healthy: pleg was last seen active ${Math.round(age / 1000)}s ago; threshold is ${RELIST_THRESHOLD_MS / 1000}s` };
  }

  /** One relist: two list calls, then an event per change. */
  async relist(): Promise<void> {
    const { runtime, labels, onEvent } = this.#o;
    const t0 = performance.now();
    let items, containers;
    try {
      [{ items }, { containers }] = await Promise.all([runtime.listPodSandbox({}), runtime.listContainers({})]);
    } catch (err) {
      this.#lastError = `PLEG relist failed: ${(err as Error).message}`;
      this.#o.log?.(this.#lastError);
      return;
    }
    this.#o.onLists?.(t0, items, containers);
    const nextContainers = new Map<string, [string, string]>();
    for (const c of containers) {
      const uid = c.labels[labels.podUid];
      if (!uid) continue;
      nextContainers.set(c.id, [uid, c.state]);
      const old = this.#containers.get(c.id);
      if (old?.[1] === c.state) continue;
      onEvent({ uid, id: c.id, type: c.state === "CONTAINER_RUNNING" ? "ContainerStarted" : c.state === "CONTAINER_EXITED" ? "ContainerDied" : "ContainerChanged" });
    }
    for (const [id, [uid]] of this.#containers) if (!nextContainers.has(id)) onEvent({ uid, id, type: "ContainerRemoved" });
    const nextSandboxes = new Map<string, [string, string]>();
    for (const s of items) {
      const uid = s.labels[labels.podUid] ?? s.metadata?.uid;
      if (!uid) continue;
      nextSandboxes.set(s.id, [uid, s.state]);
      if (this.#sandboxes.get(s.id)?.[1] !== s.state) onEvent({ uid, id: s.id, type: "SandboxChanged" });
    }
    for (const [id, [uid]] of this.#sandboxes) if (!nextSandboxes.has(id)) onEvent({ uid, id, type: "SandboxChanged" });
    this.#containers = nextContainers;
    this.#sandboxes = nextSandboxes;
    this.#lastRelist = Date.now();
    this.#lastError = undefined;
    this.#o.onRelist?.((performance.now() - t0) / 1000, items.filter((s) => s.state === "SANDBOX_READY").length);
  }

  /** Pod uids the runtime has anything of (for cleaning up orphans after a restart). */
  runtimeUids(): Set<string> {
    return new Set([...this.#containers.values(), ...this.#sandboxes.values()].map(([uid]) => uid));
  }
}
