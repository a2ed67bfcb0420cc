// The pod table exactly as `kubectl get pods` shows it (upstream's printPod):
// READY as ready/total (sidecars counted), STATUS as the most telling
// reason (Init:0/1, ContainerCreating, CrashLoopBackOff, Completed,
// Terminating, ...), RESTARTS with how long ago the last one was.

import type { TableColumn, TableDefinition } from "../resource.js";
import { AGE_COLUMN, NAME_COLUMN, formatAge } from "../table-format.js";
import { isSidecar } from "./sidecars.js";
import type { Container, ContainerStatus, Pod } from "./types.js";
import { isTerminalPhase } from "./pod-phase.js";

export const POD_COLUMNS: readonly TableColumn[] = [
  NAME_COLUMN,
  { name: "Ready", type: "string", description: "How many of the pod's containers are ready, out of all of them.", priority: 0 },
  { name: "Status", type: "string", description: "The aggregate status of the pod's containers.", priority: 0 },
  { name: "Restarts", type: "string", description: "Container restarts in this pod, and how long ago the last one was.", priority: 0 },
  AGE_COLUMN,
  { name: "IP", type: "string", description: "The pod's primary IP address (status.podIP).", priority: 1 },
  { name: "Node", type: "string", description: "The node the pod is bound to (spec.nodeName).", priority: 1 },
  { name: "Nominated Node", type: "string", description: "The node the pod may run on after preemption (status.nominatedNodeName).", priority: 1 },
  { name: "Readiness Gates", type: "string", description: "Readiness gate conditions that are True, out of all of them.", priority: 1 },
];

const finishedAt = (s: ContainerStatus): number => {
  const t = s.lastState?.terminated?.finishedAt;
  return t ? Date.parse(t) || 0 : 0;
};

/** The STATUS, READY and RESTARTS cells of one pod. */
export function podStatusCells(pod: Pod, now: Date): { ready: string; status: string; restarts: string } {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const initSpecs = new Map<string, Container>();
  for (const c of spec.initContainers ?? []) if (c?.name) initSpecs.set(c.name, c);
  let total = (spec.containers ?? []).length + [...initSpecs.values()].filter(isSidecar).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;

  let reason = status.reason || status.phase || "";
  for (const c of status.conditions ?? []) {
    if (c?.type === "PodScheduled" && c.reason === "SchedulingGated") reason = "SchedulingGated";
  }

  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const s = initStatuses[i]!;
    restarts += s.restartCount ?? 0;
    lastRestart = Math.max(lastRestart, finishedAt(s));
    const sidecar = isSidecar(initSpecs.get(s.name ?? ""));
    if (sidecar) {
      sidecarRestarts += s.restartCount ?? 0;
      lastSidecarRestart = Math.max(lastSidecarRestart, finishedAt(s));
    }
    const term = s.state?.terminated;
    const waiting = s.state?.waiting;
    if (term && term.exitCode === 0) continue;
    if (sidecar && s.started) {
      if (s.ready) ready++;
      continue;
    }
    if (term) {
      reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode ?? 0}`;
    } else if (waiting?.reason && waiting.reason !== "PodInitializing") {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }

  const initialized = (status.conditions ?? []).some((c) => c?.type === "Initialized" && c.status === "True");
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const s = statuses[i]!;
      restarts += s.restartCount ?? 0;
      lastRestart = Math.max(lastRestart, finishedAt(s));
      const waiting = s.state?.waiting;
      const term = s.state?.terminated;
      if (waiting?.reason) reason = waiting.reason;
      else if (term?.reason) reason = term.reason;
      else if (term) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode ?? 0}`;
      else if (s.ready && s.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    // A completed container next to a running one: the pod is still running.
    if (reason === "Completed" && hasRunning) {
      const podReady = (status.conditions ?? []).some((c) => c?.type === "Ready" && c.status === "True");
      reason = podReady ? "Running" : "NotReady";
    }
  }

  const terminal = isTerminalPhase(status.phase);
  if (pod.metadata.deletionTimestamp && status.reason === "NodeLost") reason = "Unknown";
  else if (pod.metadata.deletionTimestamp && !terminal) reason = "Terminating";

  let restartsCell = String(restarts);
  if (restarts !== 0 && lastRestart > 0) restartsCell = `${restarts} (${formatAge(new Date(lastRestart).toISOString(), now)} ago)`;
  total = Math.max(total, 0);
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsCell };
}

export const podTable: TableDefinition<Pod> = {
  columns: POD_COLUMNS,
  cells(pod, now) {
    const { ready, status, restarts } = podStatusCells(pod, now);
    const spec = pod.spec ?? {};
    const st = pod.status ?? {};
    const podIP = st.podIPs?.[0]?.ip || "<none>";
    let gates = "<none>";
    const readinessGates = spec.readinessGates ?? [];
    if (readinessGates.length > 0) {
      const trueGates = readinessGates.filter((g) => (st.conditions ?? []).find((c) => c?.type === g?.conditionType)?.status === "True").length;
      gates = `${trueGates}/${readinessGates.length}`;
    }
    return [
      pod.metadata.name ?? "",
      ready,
      status,
      restarts,
      formatAge(pod.metadata.creationTimestamp, now),
      podIP,
      spec.nodeName || "<none>",
      st.nominatedNodeName || "<none>",
      gates,
    ];
  },
};
