// The API status of a pod from what the runtime reports (seed 001, "What the
// service does" 5): container states, restart counts, readiness, the phase by
// upstream's rules and the conditions PodScheduled, Initialized,
// ContainersReady and Ready, keeping transition times that did not change.

import type { Condition, Container, ContainerState, ContainerStatus, Pod, PodStatus } from "../../api/core/types.js";
import { isSidecar } from "../../api/core/sidecars.js";
import type { RuntimeContainer, RuntimePod } from "../runtime-pod/runtime-pod.js";
import { isTerminalPhase } from "../../api/core/pod-phase.js";

export interface Waiting {
  reason: string;
  message?: string;
}

export interface PodStatusInput {
  pod: Pod;
  runtime: RuntimePod | undefined;
  /** Reasons the agent recorded for containers it could not (re)start: CrashLoopBackOff, CreateContainerError... */
  waiting: ReadonlyMap<string, Waiting>;
  /** Probe results: readiness and startup (absent probe: true). */
  ready(containerName: string, containerId: string): boolean;
  started(containerName: string, containerId: string): boolean;
  hostIP: string;
  startTime: string;
  runtimeName: string;
  now: Date;
  /** Set once the pod is done: Succeeded or Failed stays (a terminal phase never goes back). */
  terminal?: "Succeeded" | "Failed";
}

const ts = (ns: number): string | null => (ns > 0 ? new Date(Math.floor(ns / 1e6)).toISOString().replace(/\.\d{3}Z$/, "Z") : null);
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");

function terminated(c: RuntimeContainer, runtimeName: string): ContainerState {
  return {
    terminated: {
      exitCode: c.exitCode,
      reason: c.reason || (c.exitCode === 0 ? "Completed" : "Error"),
      ...(c.message ? { message: c.message } : {}),
      startedAt: ts(c.startedAt),
      finishedAt: ts(c.finishedAt),
      containerID: `${runtimeName}://${c.id}`,
    } as never,
  };
}

function containerStatus(spec: Container, input: PodStatusInput, defaultWaiting: string): ContainerStatus {
  const name = spec.name ?? "";
  const all = (input.runtime?.containers ?? []).filter((c) => c.metadata?.name === name);
  const [latest, previous] = all;
  const waiting = input.waiting.get(name);
  let state: ContainerState;
  let lastState: ContainerState = previous && previous.state === "CONTAINER_EXITED" ? terminated(previous, input.runtimeName) : {};
  let running = false;
  if (latest?.state === "CONTAINER_RUNNING") {
    state = { running: { startedAt: ts(latest.startedAt) } };
    running = true;
  } else if (latest?.state === "CONTAINER_EXITED" && waiting) {
    // Waiting to restart (back-off): upstream shows waiting now and the exit as the last state.
    state = { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } };
    lastState = terminated(latest, input.runtimeName);
  } else if (latest?.state === "CONTAINER_EXITED") {
    state = terminated(latest, input.runtimeName);
  } else {
    state = { waiting: { reason: waiting?.reason ?? defaultWaiting, ...(waiting?.message ? { message: waiting.message } : {}) } };
  }
  const started = running && input.started(name, latest!.id);
  return {
    name,
    state,
    lastState,
    ready: started && input.ready(name, latest!.id),
    restartCount: latest?.metadata?.attempt ?? 0,
    image: spec.image ?? "",
    imageID: latest?.imageRef ?? "",
    ...(latest ? { containerID: `${input.runtimeName}://${latest.id}` } : {}),
    started,
  } as ContainerStatus;
}

/** Whether a container of the pod has run: initialization is then over, whatever sidecars do later. */
function containersHaveRun(regular: ContainerStatus[]): boolean {
  return regular.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated);
}

/** The init containers still holding the pod's initialization: unfinished ones, and sidecars not started yet. */
function pendingInitContainers(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[]): ContainerStatus[] {
  if (containersHaveRun(regular)) return [];
  const specs = pod.spec?.initContainers ?? [];
  return init.filter((s, i) => (isSidecar(specs[i]) ? !s.started : s.state?.terminated?.exitCode !== 0));
}

/** Upstream's getPhase over the container statuses. */
export function podPhase(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[]): string {
  const policy = pod.spec?.restartPolicy ?? "Always";
  const specs = pod.spec?.initContainers ?? [];
  const initialized = containersHaveRun(regular);
  let pendingInit = false;
  for (const [i, s] of init.entries()) {
    if (isSidecar(specs[i])) {
      if (!s.started && !initialized) pendingInit = true;
      continue;
    }
    const t = s.state?.terminated;
    if (t && t.exitCode === 0) continue;
    if (t && policy === "Never") return "Failed";
    if (s.lastState?.terminated && s.lastState.terminated.exitCode !== 0 && policy === "Never") return "Failed";
    pendingInit = true;
  }
  if (pendingInit) return "Pending";
  let waiting = 0, running = 0, stopped = 0, succeeded = 0;
  for (const s of regular) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) {
        stopped++;
        if (s.lastState.terminated.exitCode === 0) succeeded++;
      } else waiting++;
    }
  }
  if (waiting > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped > 0) {
    if (policy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (policy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

function condition(old: Condition[] | null | undefined, type: string, status: boolean, now: Date, reason?: string, message?: string): Condition {
  const value = status ? "True" : "False";
  const prev = (old ?? []).find((c) => c.type === type);
  return {
    type,
    status: value,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    lastProbeTime: null,
    lastTransitionTime: prev && prev.status === value ? prev.lastTransitionTime ?? rfc3339(now) : rfc3339(now),
  };
}

/**
 * As upstream's kubelet: a pod that succeeded was initialized (PodCompleted);
 * any other, failed ones too, is initialized only when every init container
 * completed (a RestartNever pod failed by its init container stays False).
 */
function initializedCondition(old: Condition[] | null | undefined, notInit: readonly (string | undefined)[], phase: string, now: Date): Condition {
  if (phase === "Succeeded") return condition(old, "Initialized", true, now, "PodCompleted");
  if (notInit.length === 0) return condition(old, "Initialized", true, now);
  return condition(old, "Initialized", false, now, "ContainersNotInitialized", `containers with incomplete status: [${notInit.join(" ")}]`);
}

export function buildPodStatus(input: PodStatusInput): PodStatus {
  const { pod, now } = input;
  const old = pod.status ?? {};
  const spec = pod.spec ?? {};
  // A (non-sidecar) init container is ready once it has completed successfully, as upstream's kubelet reports it.
  const init = (spec.initContainers ?? []).map((c) => {
    const s = containerStatus(c, input, "PodInitializing");
    return isSidecar(c) ? s : { ...s, ready: s.state?.terminated?.exitCode === 0 };
  });
  const initDone = pendingInitContainers(pod, init, []).length === 0;
  const regular = (spec.containers ?? []).map((c) => containerStatus(c, input, initDone ? "ContainerCreating" : "PodInitializing"));
  let phase = input.terminal ?? podPhase(pod, init, regular);
  if (isTerminalPhase(old.phase)) phase = old.phase;
  const terminal = isTerminalPhase(phase);
  // Sidecars count for readiness, as upstream's ContainersReady since sidecars.
  const sidecars = init.filter((_, i) => isSidecar(spec.initContainers?.[i]));
  const notReady = [...sidecars, ...regular].filter((s) => !s.ready).map((s) => s.name);
  const notInit = pendingInitContainers(pod, init, regular).map((s) => s.name);
  const containersReady = notReady.length === 0;
  const unreadyWhy = terminal ? ["PodCompleted", undefined] : ["ContainersNotReady", `containers with unready status: [${notReady.join(" ")}]`];
  const sandbox = input.runtime?.sandboxes[0];
  const podIP = spec.hostNetwork ? input.hostIP : sandbox?.network?.ip ?? "";
  const conditions: Condition[] = [
    initializedCondition(old.conditions, notInit, phase, now),
    condition(old.conditions, "Ready", containersReady && !terminal, now, containersReady && !terminal ? undefined : unreadyWhy[0], containersReady || terminal ? undefined : unreadyWhy[1]),
    condition(old.conditions, "ContainersReady", containersReady && !terminal, now, containersReady && !terminal ? undefined : unreadyWhy[0], containersReady || terminal ? undefined : unreadyWhy[1]),
    condition(old.conditions, "PodScheduled", true, now),
  ];
  const status: PodStatus = {
    phase,
    conditions,
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    startTime: input.startTime,
    ...(old.qosClass ? { qosClass: old.qosClass } : {}),
    containerStatuses: regular,
  };
  if (podIP) {
    status.podIP = podIP;
    status.podIPs = [{ ip: podIP }, ...(sandbox?.network?.additionalIps ?? []).map((a) => ({ ip: a.ip }))];
  }
  if (init.length > 0) status.initContainerStatuses = init;
  // Debug containers are reported but count for neither the phase nor readiness; upstream never marks them ready.
  const ephemeral = (spec.ephemeralContainers ?? []).map((c) => ({ ...containerStatus(c, input, "ContainerCreating"), ready: false }));
  if (ephemeral.length > 0) status.ephemeralContainerStatuses = ephemeral;
  return status;
}
