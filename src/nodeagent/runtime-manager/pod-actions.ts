// What SyncPod and SyncTerminatingPod do to a pod (seed 001, "What the service
// does" 3-4), decided apart from doing it, as upstream's computePodActions: a
// pure function of the pod spec and the pod as the runtime has it, returning
// plain data that pod-syncer.ts carries out through CRI. What only execution
// can tell (did a start succeed? has a crash-loop back-off run out?) stays
// there: a step says what to try, and `gatesInit` marks the one step whose
// outcome decides whether the steps after it run.

import type { Container, Pod } from "../../api/core/types.js";
import { isSidecar } from "../../api/core/sidecars.js";
import type { ProbeRestart } from "../probes/prober.js";
import { latestContainer, type RuntimeContainer, type RuntimePod } from "../runtime-pod/runtime-pod.js";

/** How long to wait before looking again at a container that could not be created or started. */
export const RETRY_MS = 2_000;

/** Which list of the pod spec a container comes from (a sidecar: an init container with restartPolicy Always). */
export type ContainerKind = "ephemeral" | "init" | "sidecar" | "regular";

interface StepBase {
  kind: ContainerKind;
  name: string;
  /**
   * The init containers after this step, and the regular containers, wait
   * unless it leaves the container started (a sidecar without a startup probe
   * lets the next init container go in the same pass).
   */
  gatesInit?: true;
}

/** Create the container (pulling its image as its policy says) and start it. */
export interface StartStep extends StepBase {
  action: "start";
  /** CRI metadata attempt: one more than the last container of that name (its restart count). */
  attempt: number;
  /** A restart after an exit at this time (ns since the epoch): its crash-loop back-off must have run out first. */
  backoffFromNs?: number;
  /** An ephemeral container's target: the running container whose PID namespace it shares. */
  targetId?: string;
}

/** Start a container the runtime holds as created (a start that failed or was cut short). */
export interface StartCreatedStep extends StepBase {
  action: "start-created";
  containerId: string;
}

/** Stop a running container whose liveness or startup probe failed. */
export interface KillStep extends StepBase {
  action: "kill";
  containerId: string;
  gracePeriodSeconds: number;
  /** Upstream's Killing message ("Container NAME failed liveness probe, will be restarted"). */
  reason: string;
  /** The probe's last output, for the log. */
  output: string;
  /** Start it again at once afterwards (the pod's restartPolicy allows it), through back-off from its exit. */
  restartAttempt?: number;
}

/** The container cannot be started yet: why it waits, and when to look again. */
export interface WaitStep extends StepBase {
  action: "wait";
  reason: string;
  message: string;
  retryAfterMs: number;
}

export type ContainerStep = StartStep | StartCreatedStep | KillStep | WaitStep;

/** The steps in a ready sandbox, in the order they run: ephemeral containers, init containers, containers. */
export interface ContainerActions {
  sandboxId: string;
  steps: ContainerStep[];
  /** Initialization is over (unless a gated step fails): the regular containers' steps are planned. */
  initialized: boolean;
  /** An init container failed in this sandbox under restartPolicy Never: once the ephemeral steps ran, the pod is done. */
  initFailed?: true;
}

export interface PodActions {
  /** Every container finished for good: nothing starts again and the pod terminates (its containers stay for logs). */
  finished: boolean;
  /**
   * No sandbox is ready: stop what is left and make a new one. Its containers
   * are planned once it exists (computeContainerActions on the pod read again),
   * since whether they restart depends on how the stopped ones ended.
   */
  createSandbox?: {
    attempt: number;
    /** Running or created containers, stopped at once (timeout 0). */
    stopContainers: string[];
    /** Older sandboxes still ready. */
    stopSandboxes: string[];
  };
  /** The steps in the ready sandbox (absent when finished or a sandbox is to be made). */
  containers?: ContainerActions;
}

/** What the probes say about a running container of this pod (the prober, in the agent). */
export interface ProbeResults {
  mustRestart(name: string, containerId: string): ProbeRestart | undefined;
  /** Whether the container's startup probe has passed. */
  started(name: string, containerId: string, container: Container): boolean;
}

/** What SyncTerminatingPod stops, in order: containers at once, then sidecars one by one in reverse order, then sandboxes. */
export interface TerminationActions {
  containers: { name: string; containerId: string }[];
  sidecars: { name: string; containerId: string }[];
  stopSandboxes: string[];
}

export function shouldRestart(policy: string, exitCode: number): boolean {
  return policy === "Always" || (policy === "OnFailure" && exitCode !== 0);
}

export function gracePeriod(pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

const live = (c: RuntimeContainer): boolean => c.state === "CONTAINER_RUNNING" || c.state === "CONTAINER_CREATED";
const nextAttempt = (c: RuntimeContainer | undefined): number => (c ? (c.metadata?.attempt ?? 0) + 1 : 0);

/** Whether nothing will run again: every container finished and the restart policy keeps it so (or, under Never, an init container failed). */
export function podFinished(pod: Pod, rp: RuntimePod): boolean {
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

export function computePodActions(pod: Pod, rp: RuntimePod, probes: ProbeResults): PodActions {
  // A pod whose containers all finished for good is not started again, even without a sandbox.
  if (podFinished(pod, rp)) return { finished: true };
  const sandbox = rp.sandboxes[0];
  if (sandbox === undefined || sandbox.state !== "SANDBOX_READY") {
    // A new sandbox: whatever ran in the old one is stopped first, and init containers run again.
    return {
      finished: false,
      createSandbox: {
        attempt: sandbox ? (sandbox.metadata?.attempt ?? 0) + 1 : 0,
        stopContainers: rp.containers.filter(live).map((c) => c.id),
        stopSandboxes: rp.sandboxes.filter((s) => s.state === "SANDBOX_READY").map((s) => s.id),
      },
    };
  }
  return { finished: false, containers: computeContainerActions(pod, rp, probes) };
}

/** The container steps in the pod's newest sandbox, which must be ready. */
export function computeContainerActions(pod: Pod, rp: RuntimePod, probes: ProbeResults): ContainerActions {
  const sandboxId = rp.sandboxes[0]!.id;
  const policy = pod.spec?.restartPolicy ?? "Always";
  const containers = pod.spec?.containers ?? [];
  const steps: ContainerStep[] = [];

  // Ephemeral containers (upstream's SyncPod step 5): each starts once, in
  // the running sandbox, before init containers so that a pod stuck in
  // initialization can be debugged too; whatever becomes of it, it is never
  // started again (a container by its name, in any sandbox, means it ran).
  for (const c of pod.spec?.ephemeralContainers ?? []) {
    const name = c.name!;
    if (latestContainer(rp, name) !== undefined) continue;
    const target = c.targetContainerName ? latestContainer(rp, c.targetContainerName, sandboxId) : undefined;
    if (c.targetContainerName && target?.state !== "CONTAINER_RUNNING") {
      steps.push({ action: "wait", kind: "ephemeral", name, reason: "CreateContainerConfigError", message: `unable to find target container ${c.targetContainerName}`, retryAfterMs: RETRY_MS });
      continue;
    }
    steps.push({ action: "start", kind: "ephemeral", name, attempt: 0, ...(target ? { targetId: target.id } : {}) });
  }

  // Init containers: one at a time, in order; each must exit 0 before the
  // next starts. A sidecar (restartPolicy Always) need only have started:
  // it keeps running beside the containers and is restarted whenever it exits.
  // Once a container of this sandbox exists, initialization is over: a sidecar
  // backing off after a crash no longer holds the containers back.
  const wasInitialized = containers.some((c) => latestContainer(rp, c.name!, sandboxId) !== undefined);
  for (const c of pod.spec?.initContainers ?? []) {
    const name = c.name!;
    const latest = latestContainer(rp, name, sandboxId);
    if (isSidecar(c)) {
      const started = sidecarSteps(pod, c, latest, latest ?? latestContainer(rp, name), probes, steps);
      if (started === true || wasInitialized) continue;
      if (started === "if-started") {
        steps[steps.length - 1]!.gatesInit = true;
        continue;
      }
      return { sandboxId, steps, initialized: false };
    }
    if (latest?.state === "CONTAINER_EXITED" && latest.exitCode === 0) continue;
    if (latest?.state === "CONTAINER_CREATED") steps.push({ action: "start-created", kind: "init", name, containerId: latest.id });
    else if (latest?.state === "CONTAINER_EXITED") {
      if (policy === "Never") return { sandboxId, steps, initialized: false, initFailed: true };
      steps.push({ action: "start", kind: "init", name, attempt: nextAttempt(latest), backoffFromNs: latest.finishedAt });
    } else if (latest === undefined) {
      steps.push({ action: "start", kind: "init", name, attempt: nextAttempt(latestContainer(rp, name)) });
    }
    // Running (or unknown): the next one waits for it.
    return { sandboxId, steps, initialized: false };
  }

  for (const c of containers) {
    const name = c.name!;
    const latest = latestContainer(rp, name);
    if (latest?.state === "CONTAINER_RUNNING" && latest.podSandboxId === sandboxId) {
      const why = probes.mustRestart(name, latest.id);
      if (why === undefined) continue;
      // Killed for its probe, it counts as failed whatever its exit code.
      const restart = shouldRestart(policy, 1) ? { restartAttempt: nextAttempt(latest) } : {};
      steps.push({ action: "kill", kind: "regular", name, containerId: latest.id, gracePeriodSeconds: why.gracePeriodSeconds ?? gracePeriod(pod), reason: why.message, output: why.output, ...restart });
    } else if (latest === undefined) {
      steps.push({ action: "start", kind: "regular", name, attempt: 0 });
    } else if (latest.podSandboxId !== sandboxId) {
      // The sandbox was recreated: the container starts again in the new one, without back-off.
      if (latest.state === "CONTAINER_EXITED" && !shouldRestart(policy, latest.exitCode)) continue;
      steps.push({ action: "start", kind: "regular", name, attempt: nextAttempt(latest) });
    } else if (latest.state === "CONTAINER_CREATED") {
      steps.push({ action: "start-created", kind: "regular", name, containerId: latest.id });
    } else if (latest.state === "CONTAINER_EXITED" && shouldRestart(policy, latest.exitCode)) {
      steps.push({ action: "start", kind: "regular", name, attempt: nextAttempt(latest), backoffFromNs: latest.finishedAt });
    }
  }
  return { sandboxId, steps, initialized: true };
}

/**
 * One sidecar: started when absent, restarted (with back-off, whatever the
 * pod's restart policy) when it exited, killed when its probe says so.
 * Returns whether it counts as started (running, startup probe passed) so
 * later init containers may run: known now, or only once its step ran.
 */
function sidecarSteps(pod: Pod, c: Container, latest: RuntimeContainer | undefined, previous: RuntimeContainer | undefined, probes: ProbeResults, steps: ContainerStep[]): boolean | "if-started" {
  const name = c.name!;
  // A startup probe has not passed for a container started or restarted now.
  const ifStarted = c.startupProbe ? false : "if-started";
  if (latest?.state === "CONTAINER_RUNNING") {
    const why = probes.mustRestart(name, latest.id);
    if (why === undefined) return c.startupProbe ? probes.started(name, latest.id, c) : true;
    // Restarted on a later pass, through back-off, once it has exited.
    steps.push({ action: "kill", kind: "sidecar", name, containerId: latest.id, gracePeriodSeconds: why.gracePeriodSeconds ?? gracePeriod(pod), reason: why.message, output: why.output });
    return false;
  }
  if (latest?.state === "CONTAINER_CREATED") steps.push({ action: "start-created", kind: "sidecar", name, containerId: latest.id });
  else if (latest?.state === "CONTAINER_EXITED") steps.push({ action: "start", kind: "sidecar", name, attempt: nextAttempt(latest), backoffFromNs: latest.finishedAt });
  // Not started in this sandbox yet (or the sandbox is new): a started sidecar lets the next init container go now.
  else steps.push({ action: "start", kind: "sidecar", name, attempt: nextAttempt(previous) });
  return ifStarted;
}

/** Upstream's kill order: containers first, sidecars last and in reverse order, then the sandboxes. */
export function computeTerminationActions(pod: Pod, rp: RuntimePod): TerminationActions {
  const sidecars = (pod.spec?.initContainers ?? []).filter(isSidecar).map((s) => s.name);
  const target = (c: RuntimeContainer) => ({ name: c.metadata?.name ?? "", containerId: c.id });
  return {
    containers: rp.containers.filter((c) => live(c) && !sidecars.includes(c.metadata?.name)).map(target),
    sidecars: [...sidecars].reverse().flatMap((s) => rp.containers.filter((c) => live(c) && c.metadata?.name === s).map(target)),
    stopSandboxes: rp.sandboxes.filter((s) => s.state === "SANDBOX_READY").map((s) => s.id),
  };
}
