// The three sync functions of seed 001 ("What the service does" 3) over CRI:
// SyncPod (volumes, sandbox, then the steps pod-actions.ts plans: ephemeral
// containers, init containers in order with sidecars kept running,
// containers, restarts with crash-loop back-off, probe-driven restarts),
// SyncTerminatingPod (preStop hooks, then stop with the grace period:
// containers first, sidecars last in reverse order) and SyncTerminatedPod
// (remove, clean up). This file carries plans out; deciding is pod-actions.ts's
// job, one container's CRI calls container-runner.ts's.

import type { Container, Pod } from "../../api/core/types.js";
import type { CriClient, PodSandboxConfig, DeepPartial } from "../cri/index.js";
import type { ObjectSource } from "../env/env.js";
import { podSeccomp, SeccompError } from "../seccomp/seccomp.js";
import type { Prober } from "../probes/prober.js";
import { NO_POD_EVENTS, type PodEvents } from "../events/pod-events.js";
import type { Waiting } from "../status/pod-status.js";
import type { SwapBehavior } from "../config/index.js";
import { setupVolumes, teardownPodDir } from "../volumes/volumes.js";
import { Backoff } from "./backoff.js";
import { ContainerRunner, ignoreNotFound, type ContainerRunnerOptions } from "./container-runner.js";
import type { RuntimeLabels } from "../runtime-pod/labels.js";
import { computeContainerActions, computePodActions, computeTerminationActions, podFinished, RETRY_MS, type ContainerStep, type PodActions, type ProbeResults } from "./pod-actions.js";
import { sandboxConfig } from "./pod-config.js";
import { hostDnsConfig } from "./pod-dns.js";
import { RuntimePodReader, type RuntimePod } from "../runtime-pod/runtime-pod.js";

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
  /** The agent's name in the naming table, for the DNS warnings. */
  agentName?: string;
  /** The host's resolv.conf (upstream's resolvConf): Default-policy pods' DNS, search domains for the others. */
  resolvConf: string;
  swapBehavior: SwapBehavior | "";
  node: { memoryBytes: number; swapBytes: number; cpu: number; cgroupV2: boolean };
  backoff?: Backoff;
  /** Pulling, Pulled, Created, Started, Killing, BackOff, Failed (none when standalone). */
  events?: PodEvents;
  devices?: ContainerRunnerOptions["devices"];
  log?: (line: string) => void;
}

export interface SyncResult {
  runtime: RuntimePod;
  /** Sync again after this long (a back-off ending, a failed start to retry). */
  requeueAfterMs?: number;
  /** Nothing will run again: every container finished and the restart policy keeps it so. */
  done?: boolean;
}

/** One SyncPod pass in its ready sandbox: where containers go, and what its steps found out. */
interface Pass {
  pod: Pod;
  sandboxId: string;
  sbConfig: DeepPartial<PodSandboxConfig>;
  podIP: string;
  podIPs: string[];
  volumePaths: Map<string, string>;
  waiting: Map<string, Waiting>;
  /** Sync again after this long: the soonest any step asked for. */
  requeueAfterMs: number | undefined;
  /** Ids of the containers the steps created, started or stopped: read again before reporting the pod. */
  touched: Set<string>;
}

export class PodSyncer {
  readonly #o: PodSyncerOptions;
  readonly backoff: Backoff;
  readonly #waiting = new Map<string, Map<string, Waiting>>();
  readonly #last = new Map<string, RuntimePod>();
  readonly #events: PodEvents;
  readonly #containers: ContainerRunner;
  readonly #reader: RuntimePodReader;
  /** uid → when (performance.now()) its last sync ended: a relist asked for later may stand for the runtime at the start of the next. */
  readonly #syncEnded = new Map<string, number>();

  constructor(options: PodSyncerOptions) {
    this.#o = options;
    this.#reader = new RuntimePodReader(options.runtime, options.labels);
    this.#events = options.events ?? NO_POD_EVENTS;
    this.backoff = options.backoff ?? new Backoff();
    const { runtime, labels, rootDir, objects, hostIP, swapBehavior, node, log } = options;
    this.#containers = new ContainerRunner({ runtime, labels, rootDir, clusterDomain: options.clusterDomain, objects, hostIP, swapBehavior, node, events: this.#events, ...(options.devices ? { devices: options.devices } : {}), ...(log ? { log } : {}) });
  }

  /** Why each container of the pod is waiting, as of the last sync. */
  waiting(uid: string): ReadonlyMap<string, Waiting> {
    return this.#waiting.get(uid) ?? new Map();
  }

  /** The PLEG's lists of one relist, asked for at `at` (performance.now()): the first read of a later sync may use them. */
  observeRelist(...args: Parameters<RuntimePodReader["observeRelist"]>): Set<string> {
    const [at] = args;
    const uids = this.#reader.observeRelist(...args);
    // A pod the runtime has nothing of since its last sync ended: a later relist stands for it as well as this one.
    for (const [uid, ended] of this.#syncEnded) if (ended < at && !uids.has(uid)) this.#syncEnded.delete(uid);
    return uids;
  }

  /**
   * Reads the pod from the runtime (and remembers it for lastRuntime). `atSyncStart`: the
   * first read of a sync, which a relist asked for after the pod's last sync ended answers as
   * well as the runtime (upstream's pod cache); reads after acting always ask the runtime.
   */
  async runtimePod(uid: string, atSyncStart = false): Promise<RuntimePod> {
    const rp = await this.#reader.read(uid, atSyncStart ? this.#syncEnded.get(uid) ?? 0 : undefined);
    this.#last.set(uid, rp);
    return rp;
  }

  /** Notes the end of a sync of the pod (whatever it did to the runtime happened before now). */
  #ended<T>(uid: string, work: Promise<T>): Promise<T> {
    return work.finally(() => this.#syncEnded.set(uid, performance.now()));
  }

  /** The pod as the runtime had it at the end of the last sync. */
  lastRuntime(uid: string): RuntimePod | undefined {
    return this.#last.get(uid);
  }

  syncPod(pod: Pod): Promise<SyncResult> {
    return this.#ended(pod.metadata.uid!, this.#syncPod(pod));
  }

  async #syncPod(pod: Pod): Promise<SyncResult> {
    const uid = pod.metadata.uid!;
    const waiting = new Map<string, Waiting>();
    this.#waiting.set(uid, waiting);
    let rp = await this.runtimePod(uid, true);
    const probes = this.#probeResults(uid);
    const plan = computePodActions(pod, rp, probes);
    if (plan.finished) return { runtime: rp, done: true };

    const hostIP = this.#o.hostIP();
    let volumePaths: Map<string, string>;
    try {
      const nodeAllocatable = { cpu: this.#o.node.cpu, memory: this.#o.node.memoryBytes };
      volumePaths = await setupVolumes(pod, { hostIP, podIP: rp.sandboxes[0]?.network?.ip ?? hostIP, nodeAllocatable, rootDir: this.#o.rootDir, keyDomain: this.#o.keyDomain, objects: this.#o.objects });
    } catch (err) {
      waitAll(pod, waiting, { reason: "ContainerCreating", message: (err as Error).message });
      // As upstream's kubelet tells of a volume it cannot mount yet (a missing config map, an unbound claim).
      this.#events.record(pod, undefined, "Warning", "FailedMount", `Unable to attach or mount volumes: ${(err as Error).message}`);
      return { runtime: rp, requeueAfterMs: RETRY_MS };
    }

    let actions = plan.containers;
    let sbConfig: DeepPartial<PodSandboxConfig>;
    if (plan.createSandbox) {
      const made = await this.#createSandbox(pod, rp, plan.createSandbox, waiting);
      if (made === undefined) return { runtime: rp, requeueAfterMs: RETRY_MS };
      ({ rp, sbConfig } = made);
      actions = computeContainerActions(pod, rp, probes);
    } else {
      sbConfig = this.#sandboxConfig(pod, rp.sandboxes[0]!.metadata?.attempt ?? 0);
    }
    const { sandboxId, steps, initFailed } = actions!;
    const network = rp.sandboxes[0]!.network;
    const podIP = pod.spec?.hostNetwork ? hostIP : network?.ip ?? "";
    const podIPs = podIP === "" ? [] : pod.spec?.hostNetwork ? [podIP] : [podIP, ...(network?.additionalIps ?? []).map((a) => a.ip)];
    const pass: Pass = { pod, sandboxId, sbConfig, podIP, podIPs, volumePaths, waiting, requeueAfterMs: undefined, touched: new Set() };
    for (const step of steps) {
      const started = await this.#run(step, pass);
      if (step.gatesInit && !started) break;
    }
    if (initFailed) return { runtime: rp, done: true };
    if (pass.touched.size > 0) {
      const before = rp;
      rp = await this.#reader.rereadContainers(rp, new Map([...pass.touched].map((id) => [id, before.containers.find((c) => c.id === id)?.podSandboxId ?? sandboxId])));
      this.#last.set(uid, rp);
    }
    await this.#pruneDead(rp);
    this.#o.prober.update(pod, rp, podIP);
    return { runtime: rp, ...(pass.requeueAfterMs !== undefined ? { requeueAfterMs: pass.requeueAfterMs } : {}), ...(podFinished(pod, rp) ? { done: true } : {}) };
  }

  /**
   * Stops every container within the grace period (preStop hooks first, then
   * StopContainer with what remains), sidecars only after the others and in
   * reverse order, as upstream; then the sandboxes.
   */
  syncTerminatingPod(pod: Pod, gracePeriodSeconds: number): Promise<RuntimePod> {
    return this.#ended(pod.metadata.uid!, this.#syncTerminatingPod(pod, gracePeriodSeconds));
  }

  async #syncTerminatingPod(pod: Pod, gracePeriodSeconds: number): Promise<RuntimePod> {
    const uid = pod.metadata.uid!;
    this.#o.prober.remove(uid);
    const rp = await this.runtimePod(uid, true);
    const deadline = Date.now() + gracePeriodSeconds * 1000;
    const remaining = () => Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    const podIP = rp.sandboxes[0]?.network?.ip ?? "";
    const plan = computeTerminationActions(pod, rp);
    const initContainers = pod.spec?.initContainers ?? [];
    const specOf = (name: string) => [...(pod.spec?.containers ?? []), ...initContainers].find((s) => s.name === name);
    await Promise.all(plan.containers.map((c) => this.#containers.kill(pod, specOf(c.name), c.containerId, podIP, remaining())));
    for (const c of plan.sidecars) await this.#containers.kill(pod, initContainers.find((s) => s.name === c.name), c.containerId, podIP, remaining());
    for (const id of plan.stopSandboxes) await this.#o.runtime.stopPodSandbox({ podSandboxId: id });
    return this.runtimePod(uid);
  }

  /** Removes the pod's containers, sandboxes and files (when it is deleted; a finished pod keeps its containers for logs). */
  syncTerminatedPod(pod: Pod, options: { remove: boolean }): Promise<void> {
    return this.#ended(pod.metadata.uid!, this.#syncTerminatedPod(pod, options));
  }

  async #syncTerminatedPod(pod: Pod, options: { remove: boolean }): Promise<void> {
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

  #probeResults(uid: string): ProbeResults {
    const prober = this.#o.prober;
    return {
      mustRestart: (name, containerId) => prober.mustRestart(uid, name, containerId),
      started: (name, containerId, container) => prober.started(uid, name, containerId, container),
    };
  }

  /** Stops what is left of the pod and makes its new sandbox; the pod as the runtime has it then (undefined: the sandbox failed, the containers wait). */
  async #createSandbox(pod: Pod, rp: RuntimePod, step: NonNullable<PodActions["createSandbox"]>, waiting: Map<string, Waiting>): Promise<{ rp: RuntimePod; sbConfig: DeepPartial<PodSandboxConfig> } | undefined> {
    const { runtime: rt } = this.#o;
    const uid = pod.metadata.uid!;
    await Promise.all(step.stopContainers.map((containerId) => rt.stopContainer({ containerId, timeout: 0 }).catch(ignoreNotFound)));
    for (const podSandboxId of step.stopSandboxes) await rt.stopPodSandbox({ podSandboxId });
    // A pod's first start has nothing of its own to read again but the new sandbox (its IP).
    const firstStart = rp.sandboxes.length === 0 && rp.containers.length === 0;
    let sbConfig: DeepPartial<PodSandboxConfig>;
    try {
      sbConfig = this.#sandboxConfig(pod, step.attempt, (reason, message) => this.#o.events?.record(pod, undefined, "Warning", reason, message));
      const { podSandboxId } = await rt.runPodSandbox({ config: sbConfig });
      if (firstStart) {
        rp = { uid, sandboxes: [(await this.#reader.sandboxStatus(podSandboxId))!], containers: [] };
        this.#last.set(uid, rp);
      }
    } catch (err) {
      const reason = err instanceof SeccompError ? err.reason : "ContainerCreating";
      waitAll(pod, waiting, { reason, message: `failed to create the pod sandbox: ${(err as Error).message}` });
      return undefined;
    }
    // Made again: the old sandbox and its containers stopped.
    return { rp: firstStart ? rp : await this.runtimePod(uid), sbConfig };
  }

  #sandboxConfig(pod: Pod, attempt: number, dnsWarning?: (reason: string, message: string) => void): DeepPartial<PodSandboxConfig> {
    const seccomp = podSeccomp(pod, { profileRoot: `${this.#o.rootDir}/seccomp` });
    const hostDns = hostDnsConfig(this.#o.resolvConf);
    return sandboxConfig({ pod, attempt, labels: this.#o.labels, podLogsDir: this.#o.podLogsDir, clusterDNS: this.#o.clusterDNS, clusterDomain: this.#o.clusterDomain, hostDns, ...(dnsWarning ? { dnsWarning } : {}), ...(this.#o.agentName ? { agentName: this.#o.agentName } : {}), seccomp });
  }

  /** Carries out one step; returns whether it left the container started (what a gated step decides by). */
  async #run(step: ContainerStep, pass: Pass): Promise<boolean> {
    const c = specOf(pass.pod, step);
    switch (step.action) {
      case "wait":
        pass.waiting.set(step.name, { reason: step.reason, message: step.message });
        later(pass, step.retryAfterMs);
        return false;
      case "start":
        return step.backoffFromNs === undefined ? this.#start(pass, c, step.attempt, step.targetId) : this.#restart(pass, c, step.backoffFromNs, step.attempt);
      case "start-created":
        pass.touched.add(step.containerId);
        return !(await this.#containers.start(step.containerId, this.#target(pass, c)));
      case "kill": {
        this.#o.log?.(`${step.reason}: ${step.output}`);
        await this.#containers.kill(pass.pod, c, step.containerId, pass.podIP, step.gracePeriodSeconds, step.reason);
        pass.touched.add(step.containerId);
        if (step.restartAttempt === undefined) return false;
        const killed = (await this.runtimePod(pass.pod.metadata.uid!)).containers.find((x) => x.id === step.containerId);
        return this.#restart(pass, c, killed?.finishedAt || Date.now() * 1e6, step.restartAttempt);
      }
    }
  }

  /** Creates and starts `c`; whether it runs now. */
  async #start(pass: Pass, c: Container, attempt: number, targetId?: string): Promise<boolean> {
    const retry = await this.#containers.create(this.#target(pass, c), { sandboxId: pass.sandboxId, sbConfig: pass.sbConfig, attempt, volumePaths: pass.volumePaths, ...(targetId !== undefined ? { targetId } : {}) });
    if (retry) later(pass, RETRY_MS);
    return !retry && !pass.waiting.has(c.name!);
  }

  /** Restarts `c` after its exit, unless its back-off still runs. */
  async #restart(pass: Pass, c: Container, finishedAtNs: number, attempt: number): Promise<boolean> {
    const { pod } = pass;
    const uid = pod.metadata.uid!;
    const key = `${uid}/${c.name}`;
    const wait = this.backoff.remaining(key, Math.floor(finishedAtNs / 1e6));
    if (wait > 0) {
      const delay = Math.round(this.backoff.delay(key) / 1000);
      const podRef = `${pod.metadata.name}_${pod.metadata.namespace ?? "default"}(${uid})`;
      pass.waiting.set(c.name!, { reason: "CrashLoopBackOff", message: `back-off ${delay}s restarting failed container=${c.name} pod=${podRef}` });
      this.#events.record(pod, c.name, "Warning", "BackOff", `Back-off restarting failed container ${c.name} in pod ${podRef}`);
      later(pass, wait);
      return false;
    }
    this.backoff.next(key);
    return this.#start(pass, c, attempt);
  }

  #target(pass: Pass, container: Container) {
    return { pod: pass.pod, container, podIP: pass.podIP, podIPs: pass.podIPs, waiting: pass.waiting, touched: pass.touched };
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
}

/** The spec a step names, from the list its kind says. */
function specOf(pod: Pod, step: ContainerStep): Container {
  const list = step.kind === "ephemeral" ? pod.spec?.ephemeralContainers : step.kind === "regular" ? pod.spec?.containers : pod.spec?.initContainers;
  return (list ?? []).find((c) => c.name === step.name)!;
}

function later(pass: Pass, ms: number): void {
  pass.requeueAfterMs = pass.requeueAfterMs === undefined ? ms : Math.min(pass.requeueAfterMs, ms);
}

/** Every init container and container waits for the same reason (volumes or the sandbox failed). */
function waitAll(pod: Pod, waiting: Map<string, Waiting>, why: Waiting): void {
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) waiting.set(c.name!, { ...why });
}
