// The probe manager: one worker per running container and probe kind
// (liveness, readiness, startup), as upstream's prober. Startup gates the
// other two; results count against successThreshold and failureThreshold;
// every change of a result wakes the pod's worker (onChange).

import type { Container, Pod, Probe } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import type { RuntimePod } from "../runtime-manager/runtime-pod.js";
import { isSidecar } from "../../api/core/sidecars.js";
import { runProbe } from "./probe.js";

type Kind = "liveness" | "readiness" | "startup";

interface Worker {
  containerId: string;
  kind: Kind;
  result: boolean;
  successes: number;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
  lastOutput: string;
}

export interface ProberOptions {
  runtime: CriClient;
  onChange: (uid: string) => void;
  log?: (line: string) => void;
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
        workers.set(key, this.#start(uid, c, latest.id, kind, probe, podIP));
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
    return this.#get(uid, name, "startup", containerId)?.result ?? false;
  }

  /** Ready: no readiness probe, or its last result succeeded (false until the first success). */
  ready(uid: string, name: string, containerId: string, container: Container): boolean {
    if (!container.readinessProbe) return true;
    return this.#get(uid, name, "readiness", containerId)?.result ?? false;
  }

  /** Why the container must be restarted (liveness or startup failed), or undefined. */
  mustRestart(uid: string, name: string, containerId: string): string | undefined {
    for (const kind of ["liveness", "startup"] as const) {
      const w = this.#get(uid, name, kind, containerId);
      if (w && w.failures > 0 && !w.result) return `Container ${name} failed ${kind} probe, will be restarted: ${w.lastOutput}`;
    }
    return undefined;
  }

  #start(uid: string, container: Container, containerId: string, kind: Kind, probe: Probe, podIP: string): Worker {
    // Liveness starts out succeeding; readiness and startup start out failing (upstream's initial values).
    const w: Worker = { containerId, kind, result: kind === "liveness", successes: 0, failures: 0, timer: undefined, stopped: false, lastOutput: "" };
    const period = Math.max(1, probe.periodSeconds ?? 10) * 1000;
    const successThreshold = Math.max(1, probe.successThreshold ?? 1);
    const failureThreshold = Math.max(1, probe.failureThreshold ?? 3);
    const tick = async (): Promise<void> => {
      if (w.stopped) return;
      // Liveness and readiness wait for the startup probe, as upstream.
      const gated = kind !== "startup" && container.startupProbe && !this.started(uid, container.name!, containerId, container);
      if (!gated && !(kind === "startup" && w.result)) {
        const outcome = await runProbe(probe, { runtime: this.#o.runtime, containerId, container, podIP });
        if (w.stopped) return;
        w.lastOutput = outcome.output;
        const before = w.result;
        if (outcome.ok) {
          w.failures = 0;
          if (++w.successes >= successThreshold) w.result = true;
        } else {
          w.successes = 0;
          if (++w.failures >= failureThreshold) w.result = false;
          if (w.failures >= failureThreshold && kind !== "readiness") this.#o.onChange(uid);
        }
        if (before !== w.result) {
          this.#o.log?.(`probe ${kind} of ${container.name} (pod ${uid}): ${w.result ? "succeeded" : `failed: ${outcome.output}`}`);
          this.#o.onChange(uid);
        }
      }
      w.timer = setTimeout(() => void tick(), period);
    };
    w.timer = setTimeout(() => void tick(), Math.max(0, probe.initialDelaySeconds ?? 0) * 1000);
    return w;
  }

  #stop(w: Worker): void {
    w.stopped = true;
    clearTimeout(w.timer);
  }
}
