// The probe manager: one worker per running container and probe kind
// (liveness, readiness, startup), as upstream's prober (seed 001). Startup
// gates the other two; a result changes only after successThreshold or
// failureThreshold consecutive outcomes; a failed liveness or startup probe
// asks for a restart (mustRestart); every failed run is reported (onEvent).

import type { Container, Pod, Probe } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import type { RuntimePod } from "../runtime-pod/runtime-pod.js";
import { isSidecar } from "../../api/core/sidecars.js";
import { runProbe } from "./probe.js";

type Kind = "liveness" | "readiness" | "startup";

const TITLE: Record<Kind, string> = { liveness: "Liveness", readiness: "Readiness", startup: "Startup" };

interface Worker {
  containerId: string;
  kind: Kind;
  /** Upstream's initial values: liveness succeeds, readiness fails, startup is unknown (undefined). */
  result: boolean | undefined;
  /** Consecutive outcomes equal to `last`. */
  run: number;
  last: boolean | undefined;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
  lastOutput: string;
  /** Probe-level terminationGracePeriodSeconds (liveness and startup only, as upstream). */
  gracePeriodSeconds: number | undefined;
}

/** Why a container must be restarted, and the grace period its probe asks for. */
export interface ProbeRestart {
  kind: "liveness" | "startup";
  /** Upstream's Killing message: "Container NAME failed liveness probe, will be restarted". */
  message: string;
  output: string;
  gracePeriodSeconds?: number;
}

export interface ProbeEvent {
  pod: Pod;
  container: string;
  /** Unhealthy: "Liveness probe failed: OUTPUT". */
  reason: "Unhealthy";
  message: string;
}

export interface ProbeResult {
  pod: Pod;
  container: string;
  kind: Kind;
  ok: boolean;
  seconds: number;
}

export interface ProberOptions {
  runtime: CriClient;
  onChange: (uid: string) => void;
  /** Each failed probe run, for the Unhealthy event. */
  onEvent?: (event: ProbeEvent) => void;
  /** Each probe run with its outcome and how long it took (the agent's /metrics/probes). */
  onResult?: (result: ProbeResult) => void;
  log?: (line: string) => void;
  /** Milliseconds per probe second (periodSeconds, initialDelaySeconds); tests shorten it. Default 1000. */
  secondMs?: number;
}

export class Prober {
  readonly #o: ProberOptions;
  /** uid → "container/kind" → worker */
  readonly #workers = new Map<string, Map<string, Worker>>();

  constructor(options: ProberOptions) {
    this.#o = options;
  }

  /** Starts workers for running containers with probes, stops those whose container is gone. */
  update(pod: Pod, runtime: RuntimePod, podIP: string): void {
    const uid = pod.metadata.uid!;
    let workers = this.#workers.get(uid);
    const wanted = new Set<string>();
    // Sidecars (restartable init containers) are probed like containers, as upstream.
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter(isSidecar)]) {
      const latest = runtime.containers.find((r) => r.metadata?.name === c.name);
      if (!latest || latest.state !== "CONTAINER_RUNNING") continue;
      for (const kind of ["liveness", "readiness", "startup"] as const) {
        const probe = c[`${kind}Probe`] as Probe | null | undefined;
        if (!probe) continue;
        const key = `${c.name}/${kind}`;
        wanted.add(key);
        const w = workers?.get(key);
        if (w && w.containerId === latest.id) continue;
        if (w) this.#stop(w);
        if (!workers) this.#workers.set(uid, (workers = new Map()));
        workers.set(key, this.#start(pod, c, latest.id, kind, probe, podIP));
      }
    }
    for (const [key, w] of workers ?? []) {
      if (!wanted.has(key)) {
        this.#stop(w);
        workers!.delete(key);
      }
    }
  }

  remove(uid: string): void {
    for (const w of this.#workers.get(uid)?.values() ?? []) this.#stop(w);
    this.#workers.delete(uid);
  }

  stopAll(): void {
    for (const uid of [...this.#workers.keys()]) this.remove(uid);
  }

  #get(uid: string, name: string, kind: Kind, containerId: string): Worker | undefined {
    const w = this.#workers.get(uid)?.get(`${name}/${kind}`);
    return w && w.containerId === containerId ? w : undefined;
  }

  /** Started: no startup probe, or it has succeeded. */
  started(uid: string, name: string, containerId: string, container: Container): boolean {
    if (!container.startupProbe) return true;
    return this.#get(uid, name, "startup", containerId)?.result === true;
  }

  /** Ready: no readiness probe, or it has succeeded successThreshold times (false until then, and until started). */
  ready(uid: string, name: string, containerId: string, container: Container): boolean {
    if (!container.readinessProbe) return true;
    return this.#get(uid, name, "readiness", containerId)?.result === true;
  }

  /** Why the container must be restarted (liveness or startup failed failureThreshold times in a row), or undefined. */
  mustRestart(uid: string, name: string, containerId: string): ProbeRestart | undefined {
    for (const kind of ["startup", "liveness"] as const) {
      const w = this.#get(uid, name, kind, containerId);
      if (w?.result !== false) continue;
      return {
        kind,
        message: `Container ${name} failed ${kind} probe, will be restarted`,
        output: w.lastOutput,
        ...(w.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: w.gracePeriodSeconds } : {}),
      };
    }
    return undefined;
  }

  #start(pod: Pod, container: Container, containerId: string, kind: Kind, probe: Probe, podIP: string): Worker {
    const uid = pod.metadata.uid!;
    const grace = probe.terminationGracePeriodSeconds;
    const w: Worker = {
      containerId,
      kind,
      result: kind === "liveness" ? true : kind === "readiness" ? false : undefined,
      run: 0,
      last: undefined,
      timer: undefined,
      stopped: false,
      lastOutput: "",
      gracePeriodSeconds: kind !== "readiness" && typeof grace === "number" ? grace : undefined,
    };
    const second = this.#o.secondMs ?? 1000;
    const period = Math.max(1, probe.periodSeconds ?? 10) * second;
    // Liveness and startup must succeed once (validation insists on 1); readiness may ask for more.
    const successThreshold = kind === "readiness" ? Math.max(1, probe.successThreshold ?? 1) : 1;
    const failureThreshold = Math.max(1, probe.failureThreshold ?? 3);
    const tick = async (): Promise<void> => {
      if (w.stopped) return;
      if (!this.#due(w, uid, container)) {
        w.timer = setTimeout(() => void tick(), period);
        return;
      }
      const began = performance.now();
      const outcome = await runProbe(probe, { runtime: this.#o.runtime, containerId, container, podIP });
      this.#o.onResult?.({ pod, container: container.name!, kind, ok: outcome.ok, seconds: (performance.now() - began) / 1000 });
      if (w.stopped) return;
      if (!outcome.ok) {
        w.lastOutput = outcome.output;
        this.#o.onEvent?.({ pod, container: container.name!, reason: "Unhealthy", message: `${TITLE[kind]} probe failed: ${outcome.output}` });
      }
      w.run = w.last === outcome.ok ? w.run + 1 : 1;
      w.last = outcome.ok;
      const before = w.result;
      if (outcome.ok ? w.run >= successThreshold : w.run >= failureThreshold) {
        w.result = outcome.ok;
        // A failed liveness or startup result stands until the container is replaced; counting starts afresh for
        // the next one (upstream resets resultRun and holds the worker).
        if (!outcome.ok && kind !== "readiness") w.run = 0;
      }
      if (before !== w.result) {
        this.#o.log?.(`probe ${kind} of ${container.name} (pod ${uid}): ${w.result ? "succeeded" : `failed: ${outcome.output}`}`);
        this.#o.onChange(uid);
      }
      w.timer = setTimeout(() => void tick(), period);
    };
    w.timer = setTimeout(() => void tick(), Math.max(0, probe.initialDelaySeconds ?? 0) * second);
    return w;
  }

  /**
   * Whether the worker probes now: liveness and readiness wait for the startup probe, a startup
   * probe stops once it succeeded, and a failed liveness or startup probe holds until its
   * container is replaced (a new worker).
   */
  #due(w: Worker, uid: string, container: Container): boolean {
    if (w.kind === "startup") return w.result === undefined;
    if (w.kind === "liveness" && w.result === false) return false;
    return this.started(uid, container.name!, w.containerId, container);
  }

  #stop(w: Worker): void {
    w.stopped = true;
    clearTimeout(w.timer);
  }
}
