// The three sync functions of seed 001 ("What the service does" 3) over CRI:
// SyncPod (sandbox, init containers in order with sidecars kept running,
// containers, restarts with crash-loop back-off, probe-driven restarts,
// postStart hooks), SyncTerminatingPod (preStop hooks, then stop with the
// grace period: containers first, sidecars last in reverse order) and
// SyncTerminatedPod (remove, clean up). Reasons a container could not start
// are kept for the status builder.

import type { Container, Pod } from "../../api/core/types.js";
import { podQOSClass } from "../../api/core/pods.js";
import { isSidecar } from "../../api/core/sidecars.js";
import { parseQuantity } from "../../api/core/quantity.js";
import { isCriError, type CriClient, type PodSandboxConfig, type DeepPartial } from "../cri/index.js";
import { ContainerConfigError, containerEnv, type ObjectSource } from "../env/env.js";
import { containerSeccomp, podSeccomp, SeccompError } from "../seccomp/seccomp.js";
import { hookOf, runHook } from "../lifecycle/hooks.js";
import type { Prober } from "../probes/prober.js";
import type { Waiting } from "../status/pod-status.js";
import { containerSwap } from "../swap/swap.js";
import type { SwapBehavior } from "../config/index.js";
import { containerMounts, setupVolumes, teardownPodDir } from "../volumes/volumes.js";
import { Backoff } from "./backoff.js";
import type { RuntimeLabels } from "./labels.js";
import { containerConfig, sandboxConfig } from "./pod-config.js";
import { fetchRuntimePod, latestContainer, type RuntimeContainer, type RuntimePod } from "./runtime-pod.js";

export interface PodSyncerOptions {
  runtime: CriClient;
  labels: RuntimeLabels;
  rootDir: string;
  podLogsDir: string;
  keyDomain: string;
  objects: ObjectSource;
  prober: Prober;
  hostIP: () => string;
  clusterDNS: readonly string[];
  clusterDomain: string;
  swapBehavior: SwapBehavior | "";
  node: { memoryBytes: number; swapBytes: number; cpu: number; cgroupV2: boolean };
  backoff?: Backoff;
  log?: (line: string) => void;
}

export interface SyncResult {
  runtime: RuntimePod;
  /** Sync again after this long (a back-off ending, a failed start to retry). */
  requeueAfterMs?: number;
  /** Nothing will run again: every container finished and the restart policy keeps it so. */
  done?: boolean;
}

/** How long to wait before retrying a container that failed to be created or started. */
const RETRY_MS = 2_000;
/** postStart has no deadline upstream; ours only keeps a stuck hook from holding the pod worker forever. */
const POST_START_DEADLINE_S = 3_600;
/** Upstream's minimumGracePeriodInSeconds: what a container still gets after a preStop hook used up the grace period. */
const MIN_GRACE_AFTER_HOOK_S = 2;

export function shouldRestart(policy: string, exitCode: number): boolean {
  return policy === "Always" || (policy === "OnFailure" && exitCode !== 0);
}

export class PodSyncer {
  readonly #o: PodSyncerOptions;
  readonly backoff: Backoff;
  readonly #waiting = new Map<string, Map<string, Waiting>>();
  readonly #last = new Map<string, RuntimePod>();

  constructor(options: PodSyncerOptions) {
    this.#o = options;
    this.backoff = options.backoff ?? new Backoff();
  }

  /** Why each container of the pod is waiting, as of the last sync. */
  waiting(uid: string): ReadonlyMap<string, Waiting> {
    return this.#waiting.get(uid) ?? new Map();
  }

  /** Reads the pod from the runtime (and remembers it for lastRuntime). */
  async runtimePod(uid: string): Promise<RuntimePod> {
    const rp = await fetchRuntimePod(this.#o.runtime, this.#o.labels, uid);
    this.#last.set(uid, rp);
    return rp;
  }

  /** The pod as the runtime had it at the end of the last sync. */
  lastRuntime(uid: string): RuntimePod | undefined {
    return this.#last.get(uid);
  }

  async syncPod(pod: Pod): Promise<SyncResult> {
    const { runtime: rt } = this.#o;
    const uid = pod.metadata.uid!;
    const waiting = new Map<string, Waiting>();
    this.#waiting.set(uid, waiting);
    const policy = pod.spec?.restartPolicy ?? "Always";
    const containers = pod.spec?.containers ?? [];
    let rp = await this.runtimePod(uid);

    // A pod whose containers all finished for good is not started again, even without a sandbox.
    if (this.#finished(pod, rp)) return { runtime: rp, done: true };

    const ctx = this.#context(rp);
    let volumePaths: Map<string, string>;
    try {
      volumePaths = await setupVolumes(pod, { ...ctx, rootDir: this.#o.rootDir, keyDomain: this.#o.keyDomain, objects: this.#o.objects });
    } catch (err) {
      for (const c of [...(pod.spec?.initContainers ?? []), ...containers]) waiting.set(c.name!, { reason: "ContainerCreating", message: (err as Error).message });
      return { runtime: rp, requeueAfterMs: RETRY_MS };
    }

    let sandbox = rp.sandboxes[0];
    let sbConfig: DeepPartial<PodSandboxConfig>;
    const seccompRoot = { profileRoot: `${this.#o.rootDir}/seccomp` };
    if (!sandbox || sandbox.state !== "SANDBOX_READY") {
      // A new sandbox: whatever ran in the old one is stopped first, and init containers run again.
      await this.#stopContainers(rp, 0);
      for (const s of rp.sandboxes) if (s.state === "SANDBOX_READY") await rt.stopPodSandbox({ podSandboxId: s.id });
      const attempt = sandbox ? (sandbox.metadata?.attempt ?? 0) + 1 : 0;
      // A pod's first start has nothing of its own to read again but the new sandbox (its IP).
      const firstStart = rp.sandboxes.length === 0 && rp.containers.length === 0;
      try {
        sbConfig = this.#sandboxConfig(pod, attempt, podSeccomp(pod, seccompRoot));
        const { podSandboxId } = await rt.runPodSandbox({ config: sbConfig });
        if (firstStart) {
          rp = { uid, sandboxes: [(await rt.podSandboxStatus({ podSandboxId })).status!], containers: [] };
          this.#last.set(uid, rp);
        }
      } catch (err) {
        const reason = err instanceof SeccompError ? err.reason : "ContainerCreating";
        for (const c of [...(pod.spec?.initContainers ?? []), ...containers]) waiting.set(c.name!, { reason, message: `failed to create the pod sandbox: ${(err as Error).message}` });
        return { runtime: rp, requeueAfterMs: RETRY_MS };
      }
      if (!firstStart) rp = await this.runtimePod(uid); // made again: the old sandbox and its containers stopped
      sandbox = rp.sandboxes[0]!;
    } else {
      sbConfig = this.#sandboxConfig(pod, sandbox.metadata?.attempt ?? 0, podSeccomp(pod, seccompRoot));
    }
    const sandboxId = sandbox.id;
    const podIP = pod.spec?.hostNetwork ? ctx.hostIP : sandbox.network?.ip ?? "";
    let requeue: number | undefined;
    const later = (ms: number) => (requeue = requeue === undefined ? ms : Math.min(requeue, ms));
    let changed = false;
    const start = async (c: Container, attempt: number, targetId?: string): Promise<boolean> => {
      changed = true;
      const retry = await this.#startContainer(pod, c, { sandboxId, sbConfig, attempt, volumePaths, podIP, waiting, ...(targetId !== undefined ? { targetId } : {}) });
      if (retry) later(RETRY_MS);
      return !retry && !waiting.has(c.name!);
    };
    /** Restart `c` after its exit, unless its back-off still runs. */
    const restart = async (c: Container, finishedAtNs: number, attempt: number): Promise<boolean> => {
      const key = `${uid}/${c.name}`;
      const wait = this.backoff.remaining(key, Math.floor(finishedAtNs / 1e6));
      if (wait > 0) {
        const delay = Math.round(this.backoff.delay(key) / 1000);
        waiting.set(c.name!, { reason: "CrashLoopBackOff", message: `back-off ${delay}s restarting failed container=${c.name} pod=${pod.metadata.name}_${pod.metadata.namespace ?? "default"}(${uid})` });
        later(wait);
        return false;
      }
      this.backoff.next(key);
      return start(c, attempt);
    };
    const hookTarget = (c: Container, containerId: string) => ({ pod, container: c, containerId, podIP, waiting });

    // Ephemeral containers (upstream's SyncPod step 5): each starts once, in
    // the running sandbox, before init containers so that a pod stuck in
    // initialization can be debugged too; whatever becomes of it, it is never
    // started again (a container by its name, in any sandbox, means it ran).
    for (const c of pod.spec?.ephemeralContainers ?? []) {
      if (latestContainer(rp, c.name!) !== undefined) continue;
      const target = c.targetContainerName ? latestContainer(rp, c.targetContainerName, sandboxId) : undefined;
      if (c.targetContainerName && target?.state !== "CONTAINER_RUNNING") {
        waiting.set(c.name!, { reason: "CreateContainerConfigError", message: `unable to find target container ${c.targetContainerName}` });
        later(RETRY_MS);
        continue;
      }
      await start(c, 0, target?.id);
    }

    // Init containers: one at a time, in order; each must exit 0 before the
    // next starts. A sidecar (restartPolicy Always) need only have started:
    // it keeps running beside the containers and is restarted whenever it exits.
    // Once a container of this sandbox exists, initialization is over: a sidecar
    // backing off after a crash no longer holds the containers back.
    const initialized = containers.some((c) => latestContainer(rp, c.name!, sandboxId) !== undefined);
    let initDone = true;
    for (const c of pod.spec?.initContainers ?? []) {
      const latest = latestContainer(rp, c.name!, sandboxId);
      if (isSidecar(c)) {
        const previous = latest ?? latestContainer(rp, c.name!);
        if ((await this.#keepSidecar(c, latest, previous, { uid, restart, start, target: hookTarget })) || initialized) continue;
        initDone = false;
        break;
      }
      if (latest?.state === "CONTAINER_EXITED" && latest.exitCode === 0) continue;
      initDone = false;
      if (latest?.state === "CONTAINER_CREATED") await this.#start(latest.id, hookTarget(c, latest.id));
      else if (latest?.state === "CONTAINER_EXITED") {
        if (policy === "Never") return { runtime: rp, done: true };
        await restart(c, latest.finishedAt, (latest.metadata?.attempt ?? 0) + 1);
      } else if (latest === undefined) {
        const previous = latestContainer(rp, c.name!);
        await start(c, previous ? (previous.metadata?.attempt ?? 0) + 1 : 0);
      }
      break;
    }

    if (initDone) {
      for (const c of containers) {
        let latest = latestContainer(rp, c.name!);
        if (latest?.state === "CONTAINER_RUNNING" && latest.podSandboxId === sandboxId) {
          const why = this.#o.prober.mustRestart(uid, c.name!, latest.id);
          if (why === undefined) continue;
          this.#o.log?.(why);
          await this.#kill(pod, c, latest.id, podIP, gracePeriod(pod));
          latest = (await this.runtimePod(uid)).containers.find((x) => x.id === latest!.id) ?? latest;
          changed = true;
          if (!shouldRestart(policy, latest.exitCode === 0 ? 1 : latest.exitCode)) continue;
          await restart(c, latest.finishedAt || Date.now() * 1e6, (latest.metadata?.attempt ?? 0) + 1);
        } else if (latest === undefined) {
          await start(c, 0);
        } else if (latest.podSandboxId !== sandboxId) {
          // The sandbox was recreated: the container starts again in the new one, without back-off.
          if (latest.state === "CONTAINER_EXITED" && !shouldRestart(policy, latest.exitCode)) continue;
          await start(c, (latest.metadata?.attempt ?? 0) + 1);
        } else if (latest.state === "CONTAINER_CREATED") {
          changed = true;
          await this.#start(latest.id, hookTarget(c, latest.id));
        } else if (latest.state === "CONTAINER_EXITED" && shouldRestart(policy, latest.exitCode)) {
          await restart(c, latest.finishedAt, (latest.metadata?.attempt ?? 0) + 1);
        }
      }
    }
    if (changed) rp = await this.runtimePod(uid);
    await this.#pruneDead(rp);
    this.#o.prober.update(pod, rp, podIP);
    return { runtime: rp, ...(requeue !== undefined ? { requeueAfterMs: requeue } : {}), ...(this.#finished(pod, rp) ? { done: true } : {}) };
  }

  /**
   * Stops every container within the grace period (preStop hooks first, then
   * StopContainer with what remains), sidecars only after the others and in
   * reverse order, as upstream; then the sandboxes.
   */
  async syncTerminatingPod(pod: Pod, gracePeriodSeconds: number): Promise<RuntimePod> {
    const uid = pod.metadata.uid!;
    this.#o.prober.remove(uid);
    const rp = await this.runtimePod(uid);
    const deadline = Date.now() + gracePeriodSeconds * 1000;
    const remaining = () => Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    const podIP = rp.sandboxes[0]?.network?.ip ?? "";
    const sidecars = (pod.spec?.initContainers ?? []).filter(isSidecar);
    const live = (c: RuntimeContainer) => c.state === "CONTAINER_RUNNING" || c.state === "CONTAINER_CREATED";
    const specOf = (c: RuntimeContainer) => [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((s) => s.name === c.metadata?.name);
    const isSidecarContainer = (c: RuntimeContainer) => sidecars.some((s) => s.name === c.metadata?.name);
    await Promise.all(rp.containers.filter((c) => live(c) && !isSidecarContainer(c)).map((c) => this.#kill(pod, specOf(c), c.id, podIP, remaining())));
    for (const s of [...sidecars].reverse()) {
      for (const c of rp.containers.filter((x) => live(x) && x.metadata?.name === s.name)) await this.#kill(pod, s, c.id, podIP, remaining());
    }
    for (const s of rp.sandboxes) if (s.state === "SANDBOX_READY") await this.#o.runtime.stopPodSandbox({ podSandboxId: s.id });
    return this.runtimePod(uid);
  }

  /** Removes the pod's containers, sandboxes and files (when it is deleted; a finished pod keeps its containers for logs). */
  async syncTerminatedPod(pod: Pod, options: { remove: boolean }): Promise<void> {
    const uid = pod.metadata.uid!;
    this.#o.prober.remove(uid);
    if (!options.remove) return;
    const rp = await this.runtimePod(uid);
    for (const c of rp.containers) await this.#o.runtime.removeContainer({ containerId: c.id }).catch(ignoreNotFound);
    for (const s of rp.sandboxes) await this.#o.runtime.removePodSandbox({ podSandboxId: s.id }).catch(ignoreNotFound);
    teardownPodDir(this.#o.rootDir, uid);
    this.backoff.forgetPrefix(`${uid}/`);
    this.#waiting.delete(uid);
    this.#last.delete(uid);
  }

  #finished(pod: Pod, rp: RuntimePod): boolean {
    const policy = pod.spec?.restartPolicy ?? "Always";
    if (policy === "Always") return false;
    const policyNeverInitFailed = policy === "Never" && (pod.spec?.initContainers ?? []).some((c) => {
      if (isSidecar(c)) return false; // restarted whatever the pod's policy
      const l = latestContainer(rp, c.name!);
      return l?.state === "CONTAINER_EXITED" && l.exitCode !== 0;
    });
    if (policyNeverInitFailed) return true;
    const containers = pod.spec?.containers ?? [];
    return containers.length > 0 && containers.every((c) => {
      const l = latestContainer(rp, c.name!);
      return l?.state === "CONTAINER_EXITED" && !shouldRestart(policy, l.exitCode);
    });
  }

  #context(rp: RuntimePod) {
    const hostIP = this.#o.hostIP();
    return { hostIP, podIP: rp.sandboxes[0]?.network?.ip ?? hostIP, nodeAllocatable: { cpu: this.#o.node.cpu, memory: this.#o.node.memoryBytes } };
  }

  #sandboxConfig(pod: Pod, attempt: number, seccomp: ReturnType<typeof podSeccomp>): DeepPartial<PodSandboxConfig> {
    return sandboxConfig({ pod, attempt, labels: this.#o.labels, podLogsDir: this.#o.podLogsDir, clusterDNS: this.#o.clusterDNS, clusterDomain: this.#o.clusterDomain, seccomp });
  }

  async #stopContainers(rp: RuntimePod, timeout: number): Promise<void> {
    await Promise.all(
      rp.containers.filter((c) => c.state === "CONTAINER_RUNNING" || c.state === "CONTAINER_CREATED").map((c) => this.#o.runtime.stopContainer({ containerId: c.id, timeout }).catch(ignoreNotFound)),
    );
  }

  /** Keeps the newest two containers per name (the running one and the last exit), as upstream's container GC. */
  async #pruneDead(rp: RuntimePod): Promise<void> {
    const seen = new Map<string, number>();
    for (const c of rp.containers) {
      const name = c.metadata?.name ?? "";
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      if (n > 2 && c.state === "CONTAINER_EXITED") await this.#o.runtime.removeContainer({ containerId: c.id }).catch(ignoreNotFound);
    }
  }

  /**
   * Starts a created container, then runs its postStart hook; a failed hook
   * kills the container (upstream's FailedPostStartHook), which then restarts
   * by the pod's policy with back-off. Returns whether to retry soon.
   */
  async #start(containerId: string, t: { pod: Pod; container: Container; podIP: string; waiting: Map<string, Waiting> }): Promise<boolean> {
    const name = t.container.name!;
    try {
      await this.#o.runtime.startContainer({ containerId });
    } catch (err) {
      t.waiting.set(name, { reason: "RunContainerError", message: isCriError(err) ? err.details : (err as Error).message });
      return true;
    }
    const hook = hookOf(t.container, "PostStart");
    if (hook === undefined) return false;
    const outcome = await runHook("PostStart", hook, { ...t, runtime: this.#o.runtime, containerId }, POST_START_DEADLINE_S);
    if (outcome.ok) return false;
    this.#o.log?.(`FailedPostStartHook: ${outcome.message}`);
    await this.#o.runtime.stopContainer({ containerId, timeout: 0 }).catch(ignoreNotFound);
    t.waiting.set(name, { reason: "PostStartHookError", message: outcome.message });
    return false;
  }

  /**
   * Stops one container: its preStop hook first (bounded by the grace
   * period; a failure is logged and the stop goes on, as upstream), then
   * StopContainer with the time left.
   */
  async #kill(pod: Pod, spec: Container | undefined, containerId: string, podIP: string, graceSeconds: number): Promise<void> {
    const hook = spec && hookOf(spec, "PreStop");
    let timeout = graceSeconds;
    if (hook !== undefined && graceSeconds > 0) {
      const began = Date.now();
      const outcome = await runHook("PreStop", hook, { pod, container: spec!, containerId, podIP, runtime: this.#o.runtime }, graceSeconds);
      if (!outcome.ok) this.#o.log?.(`FailedPreStopHook: ${outcome.message}`);
      timeout = Math.max(MIN_GRACE_AFTER_HOOK_S, graceSeconds - Math.floor((Date.now() - began) / 1000));
    }
    await this.#o.runtime.stopContainer({ containerId, timeout }).catch(ignoreNotFound);
  }

  /**
   * One sidecar during SyncPod: started when absent, restarted (with back-off,
   * whatever the pod's restart policy) when it exited. Returns whether it has
   * started (running, startup probe passed), so later init containers may run.
   */
  async #keepSidecar(
    c: Container,
    latest: RuntimeContainer | undefined,
    previous: RuntimeContainer | undefined,
    s: {
      uid: string;
      restart: (c: Container, finishedAtNs: number, attempt: number) => Promise<boolean>;
      start: (c: Container, attempt: number) => Promise<boolean>;
      target: (c: Container, containerId: string) => { pod: Pod; container: Container; containerId: string; podIP: string; waiting: Map<string, Waiting> };
    },
  ): Promise<boolean> {
    if (latest?.state === "CONTAINER_RUNNING") {
      const why = this.#o.prober.mustRestart(s.uid, c.name!, latest.id);
      if (why === undefined) return c.startupProbe ? this.#o.prober.started(s.uid, c.name!, latest.id, c) : true;
      this.#o.log?.(why);
      const t = s.target(c, latest.id);
      await this.#kill(t.pod, c, latest.id, t.podIP, gracePeriod(t.pod));
      return false;
    }
    if (latest?.state === "CONTAINER_CREATED") return !(await this.#start(latest.id, s.target(c, latest.id))) && !c.startupProbe;
    if (latest?.state === "CONTAINER_EXITED") return (await s.restart(c, latest.finishedAt, (latest.metadata?.attempt ?? 0) + 1)) && !c.startupProbe;
    // Not started in this sandbox yet (or the sandbox is new): a started sidecar lets the next init container go now.
    return (await s.start(c, previous ? (previous.metadata?.attempt ?? 0) + 1 : 0)) && !c.startupProbe;
  }

  /** Pull if needed, build the config, create and start; records why not in `waiting`. Returns whether to retry soon. */
  async #startContainer(
    pod: Pod,
    c: Container,
    s: {
      sandboxId: string;
      sbConfig: DeepPartial<PodSandboxConfig>;
      attempt: number;
      volumePaths: Map<string, string>;
      podIP: string;
      waiting: Map<string, Waiting>;
      /** An ephemeral container's target: the running container whose PID namespace it asks to share. */
      targetId?: string;
    },
  ): Promise<boolean> {
    const { runtime: rt } = this.#o;
    const image = c.image ?? "";
    try {
      const policy = c.imagePullPolicy ?? "IfNotPresent";
      const present = (await rt.imageStatus({ image: { image } })).image !== null;
      if (policy === "Never" && !present) {
        s.waiting.set(c.name!, { reason: "ErrImageNeverPull", message: `Container image "${image}" is not present with pull policy of Never` });
        return true;
      }
      if (!present || policy === "Always") {
        try {
          await rt.pullImage({ image: { image }, sandboxConfig: s.sbConfig });
        } catch (err) {
          // With Always, an image already here still runs when no registry answers (nodes without network).
          if (!present) throw Object.assign(err as Error, { pullFailed: true });
        }
      }
    } catch (err) {
      s.waiting.set(c.name!, { reason: "ErrImagePull", message: isCriError(err) ? err.details : (err as Error).message });
      return true;
    }
    let config;
    try {
      const hostIP = this.#o.hostIP();
      const envs = await containerEnv(pod, c, { objects: this.#o.objects, hostIP, podIP: s.podIP, nodeAllocatable: { cpu: this.#o.node.cpu, memory: this.#o.node.memoryBytes } });
      const seccomp = containerSeccomp(pod, c, { profileRoot: `${this.#o.rootDir}/seccomp` });
      const memoryRequest = parseQuantity(c.resources?.requests?.["memory"] ?? undefined) ?? 0;
      const memoryLimit = parseQuantity(c.resources?.limits?.["memory"] ?? undefined) ?? 0;
      const swap = containerSwap({
        behavior: this.#o.swapBehavior,
        qosClass: pod.status?.qosClass ?? podQOSClass(pod.spec),
        memoryRequestBytes: memoryRequest,
        memoryLimitBytes: memoryLimit,
        nodeMemoryBytes: this.#o.node.memoryBytes,
        nodeSwapBytes: this.#o.node.swapBytes,
        critical: (pod.spec?.priority ?? 0) >= 2_000_000_000,
        cgroupV2: this.#o.node.cgroupV2,
      });
      config = containerConfig({
        pod,
        container: c,
        attempt: s.attempt,
        labels: this.#o.labels,
        envs,
        mounts: containerMounts(pod, c, s.volumePaths),
        seccomp,
        swap,
        ...(s.targetId !== undefined ? { targetId: s.targetId } : {}),
      });
    } catch (err) {
      const reason = err instanceof ContainerConfigError ? err.reason : err instanceof SeccompError ? err.reason : "CreateContainerConfigError";
      s.waiting.set(c.name!, { reason, message: (err as Error).message });
      return true;
    }
    let containerId: string;
    try {
      ({ containerId } = await rt.createContainer({ podSandboxId: s.sandboxId, config, sandboxConfig: s.sbConfig }));
    } catch (err) {
      s.waiting.set(c.name!, { reason: "CreateContainerError", message: isCriError(err) ? err.details : (err as Error).message });
      return true;
    }
    return this.#start(containerId, { pod, container: c, podIP: s.podIP, waiting: s.waiting });
  }
}

export function gracePeriod(pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

function ignoreNotFound(err: unknown): void {
  if (!isCriError(err) || err.codeName !== "NOT_FOUND") throw err;
}
