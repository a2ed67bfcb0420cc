import { test } from "node:test";
import assert from "node:assert/strict";
import type { Container, EphemeralContainer, Pod } from "../../api/core/types.js";
import type { PodSandboxStatus } from "../cri/index.js";
import type { ProbeRestart } from "../probes/prober.js";
import { computeContainerActions, computePodActions, computeTerminationActions, RETRY_MS, type ContainerStep, type PodActions, type ProbeResults, type TerminationActions } from "./pod-actions.js";
import type { RuntimeContainer, RuntimePod } from "../runtime-pod/runtime-pod.js";

// ---- fixtures: a pod spec, the runtime's view of it, the probes' results ----

const SB = "sb-1";
const OLD_SB = "sb-0";
const FINISHED_NS = 5_000e6;

interface Spec {
  policy?: string;
  init?: Container[];
  containers?: Container[];
  ephemeral?: EphemeralContainer[];
  grace?: number;
}
const c = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: "busybox", ...extra });
const sidecar = (name: string, extra: Partial<Container> = {}): Container => c(name, { restartPolicy: "Always", ...extra });
const probe = { exec: { command: ["true"] } };

function pod(s: Spec = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "default", uid: "u" },
    spec: {
      restartPolicy: s.policy ?? "Always",
      containers: s.containers ?? [c("a")],
      ...(s.init ? { initContainers: s.init } : {}),
      ...(s.ephemeral ? { ephemeralContainers: s.ephemeral } : {}),
      ...(s.grace !== undefined ? { terminationGracePeriodSeconds: s.grace } : {}),
    },
  };
}

type State = "running" | "exited" | "created" | "unknown";
const STATES: Record<State, RuntimeContainer["state"]> = { running: "CONTAINER_RUNNING", exited: "CONTAINER_EXITED", created: "CONTAINER_CREATED", unknown: "CONTAINER_UNKNOWN" };
/** A container in the runtime: `name`, its state, then exit code, attempt, sandbox. Listed newest first, as fetchRuntimePod sorts them. */
function ctr(name: string, state: State, o: { exit?: number; attempt?: number; sandbox?: string } = {}): RuntimeContainer {
  const attempt = o.attempt ?? 0;
  const sandbox = o.sandbox ?? SB;
  return {
    id: `${name}-${attempt}@${sandbox}`, podSandboxId: sandbox, metadata: { name, attempt }, state: STATES[state], createdAt: 1, startedAt: 1,
    finishedAt: state === "exited" ? FINISHED_NS : 0, exitCode: o.exit ?? 0, image: null, imageRef: "", reason: "", message: "",
    labels: {}, annotations: {}, mounts: [], logPath: "", resources: null, imageId: "", user: null, imageSource: "",
  };
}
function sandbox(id: string, ready: boolean, attempt = 0): PodSandboxStatus {
  return { id, metadata: { name: "p", uid: "u", namespace: "default", attempt }, state: ready ? "SANDBOX_READY" : "SANDBOX_NOTREADY", createdAt: 1, network: { ip: "10.0.0.2", additionalIps: [] }, linux: null, labels: {}, annotations: {}, runtimeHandler: "" };
}
const rt = (containers: RuntimeContainer[], sandboxes: PodSandboxStatus[] = [sandbox(SB, true)]): RuntimePod => ({ uid: "u", sandboxes, containers });

/** Probe results: names whose probe asks for a restart, and sidecars whose startup probe passed. */
function probes(o: { failed?: Record<string, Partial<ProbeRestart>>; started?: string[] } = {}): ProbeResults {
  return {
    mustRestart: (name) => {
      const f = o.failed?.[name];
      return f === undefined ? undefined : { kind: "liveness", message: `Container ${name} failed liveness probe, will be restarted`, output: "boom", ...f };
    },
    started: (name) => o.started?.includes(name) ?? false,
  };
}

// ---- expected plans, spelled briefly ----

const id = (name: string, attempt = 0, sb = SB) => `${name}-${attempt}@${sb}`;
const plan = (steps: ContainerStep[], initialized = true): PodActions => ({ finished: false, containers: { sandboxId: SB, steps, initialized } });
const liveness = (name: string) => `Container ${name} failed liveness probe, will be restarted`;

interface Row {
  name: string;
  pod: Pod;
  runtime: RuntimePod;
  probes?: ProbeResults;
  want: PodActions;
}

const rows: Row[] = [
  // Sandbox
  { name: "new pod: a first sandbox, attempt 0", pod: pod(), runtime: rt([], []), want: { finished: false, createSandbox: { attempt: 0, stopContainers: [], stopSandboxes: [] } } },
  {
    name: "sandbox dead: what still runs is stopped, the next attempt made",
    pod: pod({ containers: [c("a"), c("b")] }),
    runtime: rt([ctr("a", "running"), ctr("b", "created"), ctr("x", "exited")], [sandbox(SB, false, 2)]),
    want: { finished: false, createSandbox: { attempt: 3, stopContainers: [id("a"), id("b")], stopSandboxes: [] } },
  },
  {
    name: "sandbox changed: a newer sandbox not ready, the older one still ready is stopped",
    pod: pod(),
    runtime: rt([ctr("a", "running", { sandbox: OLD_SB })], [sandbox(SB, false, 1), sandbox(OLD_SB, true, 0)]),
    want: { finished: false, createSandbox: { attempt: 2, stopContainers: [id("a", 0, OLD_SB)], stopSandboxes: [OLD_SB] } },
  },
  { name: "new sandbox, Always: a container of the old one starts again without back-off", pod: pod(), runtime: rt([ctr("a", "exited", { exit: 137, sandbox: OLD_SB, attempt: 1 })]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 2 }]) },
  {
    name: "new sandbox, OnFailure: a success stays done, a failure starts again",
    pod: pod({ policy: "OnFailure", containers: [c("a"), c("b")] }),
    runtime: rt([ctr("a", "exited", { exit: 0, sandbox: OLD_SB }), ctr("b", "exited", { exit: 137, sandbox: OLD_SB })]),
    want: plan([{ action: "start", kind: "regular", name: "b", attempt: 1 }]),
  },
  { name: "new sandbox, Never: nothing that ran starts again", pod: pod({ policy: "Never", containers: [c("a"), c("b")] }), runtime: rt([ctr("a", "exited", { exit: 137, sandbox: OLD_SB })]), want: plan([{ action: "start", kind: "regular", name: "b", attempt: 0 }]) },

  // Containers, by restart policy
  { name: "containers absent: started, attempt 0", pod: pod({ containers: [c("a"), c("b")] }), runtime: rt([]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 0 }, { action: "start", kind: "regular", name: "b", attempt: 0 }]) },
  { name: "running: nothing to do", pod: pod(), runtime: rt([ctr("a", "running")]), want: plan([]) },
  { name: "created (a start cut short): started", pod: pod(), runtime: rt([ctr("a", "created")]), want: plan([{ action: "start-created", kind: "regular", name: "a", containerId: id("a") }]) },
  { name: "exited 0, Always: restarted through back-off", pod: pod(), runtime: rt([ctr("a", "exited", { attempt: 3 })]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 4, backoffFromNs: FINISHED_NS }]) },
  { name: "exited 1, Always: restarted through back-off", pod: pod(), runtime: rt([ctr("a", "exited", { exit: 1 })]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 1, backoffFromNs: FINISHED_NS }]) },
  { name: "exited 1, OnFailure: restarted through back-off", pod: pod({ policy: "OnFailure", containers: [c("a"), c("b")] }), runtime: rt([ctr("a", "exited", { exit: 1 }), ctr("b", "running")]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 1, backoffFromNs: FINISHED_NS }]) },
  { name: "exited 0, OnFailure, a sibling runs: left alone", pod: pod({ policy: "OnFailure", containers: [c("a"), c("b")] }), runtime: rt([ctr("a", "exited"), ctr("b", "running")]), want: plan([]) },
  { name: "exited 1, Never, a sibling runs: left alone", pod: pod({ policy: "Never", containers: [c("a"), c("b")] }), runtime: rt([ctr("a", "exited", { exit: 1 }), ctr("b", "running")]), want: plan([]) },
  { name: "all exited 0, OnFailure: finished", pod: pod({ policy: "OnFailure" }), runtime: rt([ctr("a", "exited")]), want: { finished: true } },
  { name: "all exited, Never (one failed): finished, even without a sandbox", pod: pod({ policy: "Never", containers: [c("a"), c("b")] }), runtime: rt([ctr("a", "exited", { exit: 1 }), ctr("b", "exited")], [sandbox(SB, false)]), want: { finished: true } },
  { name: "all exited, Always: never finished", pod: pod(), runtime: rt([ctr("a", "exited")], [sandbox(SB, true)]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 1, backoffFromNs: FINISHED_NS }]) },

  // Probes
  {
    name: "liveness failed, Always: killed with the probe's grace period, then restarted",
    pod: pod({ grace: 30 }),
    runtime: rt([ctr("a", "running", { attempt: 2 })]),
    probes: probes({ failed: { a: { gracePeriodSeconds: 5 } } }),
    want: plan([{ action: "kill", kind: "regular", name: "a", containerId: id("a", 2), gracePeriodSeconds: 5, reason: liveness("a"), output: "boom", restartAttempt: 3 }]),
  },
  {
    name: "liveness failed, Never: killed with the pod's grace period, not restarted",
    pod: pod({ policy: "Never", grace: 7 }),
    runtime: rt([ctr("a", "running")]),
    probes: probes({ failed: { a: {} } }),
    want: plan([{ action: "kill", kind: "regular", name: "a", containerId: id("a"), gracePeriodSeconds: 7, reason: liveness("a"), output: "boom" }]),
  },
  // No spec hash is compared yet (upstream restarts a container whose spec hash changed): a changed image does not restart it.
  { name: "spec hash changed (new image): not acted on", pod: pod({ containers: [c("a", { image: "busybox:2" })] }), runtime: rt([ctr("a", "running")]), want: plan([]) },

  // Init containers
  { name: "init containers: the first starts, the rest and the containers wait", pod: pod({ init: [c("i1"), c("i2")] }), runtime: rt([]), want: plan([{ action: "start", kind: "init", name: "i1", attempt: 0 }], false) },
  { name: "init containers: one running holds the next", pod: pod({ init: [c("i1"), c("i2")] }), runtime: rt([ctr("i1", "running")]), want: plan([], false) },
  { name: "init containers: in order, each after the previous exited 0", pod: pod({ init: [c("i1"), c("i2")] }), runtime: rt([ctr("i1", "exited")]), want: plan([{ action: "start", kind: "init", name: "i2", attempt: 0 }], false) },
  { name: "init containers: one created is started", pod: pod({ init: [c("i1")] }), runtime: rt([ctr("i1", "created")]), want: plan([{ action: "start-created", kind: "init", name: "i1", containerId: id("i1") }], false) },
  { name: "init containers: all done, the containers start", pod: pod({ init: [c("i1"), c("i2")] }), runtime: rt([ctr("i2", "exited"), ctr("i1", "exited")]), want: plan([{ action: "start", kind: "regular", name: "a", attempt: 0 }]) },
  { name: "init container failed, Never: the pod is finished", pod: pod({ policy: "Never", init: [c("i1")] }), runtime: rt([ctr("i1", "exited", { exit: 1 })]), want: { finished: true } },
  { name: "init container failed, OnFailure: restarted through back-off", pod: pod({ policy: "OnFailure", init: [c("i1"), c("i2")] }), runtime: rt([ctr("i1", "exited", { exit: 1, attempt: 1 })]), want: plan([{ action: "start", kind: "init", name: "i1", attempt: 2, backoffFromNs: FINISHED_NS }], false) },
  { name: "init container failed, Always: restarted through back-off", pod: pod({ init: [c("i1")] }), runtime: rt([ctr("i1", "exited", { exit: 2 })]), want: plan([{ action: "start", kind: "init", name: "i1", attempt: 1, backoffFromNs: FINISHED_NS }], false) },
  { name: "init containers of an old sandbox: they run again in the new one", pod: pod({ init: [c("i1")] }), runtime: rt([ctr("a", "exited", { sandbox: OLD_SB }), ctr("i1", "exited", { sandbox: OLD_SB, attempt: 1 })]), want: plan([{ action: "start", kind: "init", name: "i1", attempt: 2 }], false) },

  // Sidecars (restartable init containers)
  {
    name: "sidecar absent: started; if it starts, the next init container goes in the same pass",
    pod: pod({ init: [sidecar("s"), c("i1")] }),
    runtime: rt([]),
    want: plan([{ action: "start", kind: "sidecar", name: "s", attempt: 0, gatesInit: true }, { action: "start", kind: "init", name: "i1", attempt: 0 }], false),
  },
  {
    name: "sidecars in a row: each gates the next, then the containers",
    pod: pod({ init: [sidecar("s1"), sidecar("s2")] }),
    runtime: rt([]),
    want: plan([{ action: "start", kind: "sidecar", name: "s1", attempt: 0, gatesInit: true }, { action: "start", kind: "sidecar", name: "s2", attempt: 0, gatesInit: true }, { action: "start", kind: "regular", name: "a", attempt: 0 }]),
  },
  { name: "sidecar with a startup probe, absent: started, the rest waits for the probe", pod: pod({ init: [sidecar("s", { startupProbe: probe }), c("i1")] }), runtime: rt([]), want: plan([{ action: "start", kind: "sidecar", name: "s", attempt: 0 }], false) },
  { name: "sidecar running, startup probe not passed: the rest waits", pod: pod({ init: [sidecar("s", { startupProbe: probe }), c("i1")] }), runtime: rt([ctr("s", "running")]), want: plan([], false) },
  { name: "sidecar running, startup probe passed: the next init container starts", pod: pod({ init: [sidecar("s", { startupProbe: probe }), c("i1")] }), runtime: rt([ctr("s", "running")]), probes: probes({ started: ["s"] }), want: plan([{ action: "start", kind: "init", name: "i1", attempt: 0 }], false) },
  { name: "sidecar created: started, gating the rest", pod: pod({ init: [sidecar("s")] }), runtime: rt([ctr("s", "created")]), want: plan([{ action: "start-created", kind: "sidecar", name: "s", containerId: id("s"), gatesInit: true }, { action: "start", kind: "regular", name: "a", attempt: 0 }]) },
  {
    name: "sidecar exited after initialization, Never: restarted through back-off without holding the containers",
    pod: pod({ policy: "Never", init: [sidecar("s")] }),
    runtime: rt([ctr("a", "running"), ctr("s", "exited", { exit: 1 })]),
    want: plan([{ action: "start", kind: "sidecar", name: "s", attempt: 1, backoffFromNs: FINISHED_NS }]),
  },
  {
    name: "sidecar exited before initialization: restarted through back-off, gating the rest",
    pod: pod({ init: [sidecar("s"), c("i1")] }),
    runtime: rt([ctr("s", "exited", { exit: 1 })]),
    want: plan([{ action: "start", kind: "sidecar", name: "s", attempt: 1, backoffFromNs: FINISHED_NS, gatesInit: true }, { action: "start", kind: "init", name: "i1", attempt: 0 }], false),
  },
  {
    name: "sidecar liveness failed: killed (restarted on a later pass), the rest waits",
    pod: pod({ grace: 9, init: [sidecar("s"), c("i1")] }),
    runtime: rt([ctr("s", "running")]),
    probes: probes({ failed: { s: {} } }),
    want: plan([{ action: "kill", kind: "sidecar", name: "s", containerId: id("s"), gracePeriodSeconds: 9, reason: liveness("s"), output: "boom" }], false),
  },
  { name: "sidecar of an old sandbox: started in the new one, its attempt counting on", pod: pod({ init: [sidecar("s")] }), runtime: rt([ctr("s", "exited", { sandbox: OLD_SB, attempt: 4 })]), want: plan([{ action: "start", kind: "sidecar", name: "s", attempt: 5, gatesInit: true }, { action: "start", kind: "regular", name: "a", attempt: 0 }]) },
  { name: "Never, the containers done, a sidecar failed: finished (sidecars do not count)", pod: pod({ policy: "Never", init: [sidecar("s")] }), runtime: rt([ctr("a", "exited"), ctr("s", "exited", { exit: 1 })]), want: { finished: true } },

  // Ephemeral containers
  {
    name: "ephemeral container: started once, before the init containers",
    pod: pod({ init: [c("i1")], ephemeral: [c("debug")] }),
    runtime: rt([ctr("i1", "running")]),
    want: plan([{ action: "start", kind: "ephemeral", name: "debug", attempt: 0 }], false),
  },
  { name: "ephemeral container with a running target: shares its PID namespace", pod: pod({ ephemeral: [{ ...c("debug"), targetContainerName: "a" }] }), runtime: rt([ctr("a", "running")]), want: plan([{ action: "start", kind: "ephemeral", name: "debug", attempt: 0, targetId: id("a") }]) },
  {
    name: "ephemeral container whose target does not run: waits",
    pod: pod({ ephemeral: [{ ...c("debug"), targetContainerName: "a" }] }),
    runtime: rt([ctr("a", "exited")]),
    want: plan([{ action: "wait", kind: "ephemeral", name: "debug", reason: "CreateContainerConfigError", message: "unable to find target container a", retryAfterMs: RETRY_MS }, { action: "start", kind: "regular", name: "a", attempt: 1, backoffFromNs: FINISHED_NS }]),
  },
  { name: "ephemeral container that ran (in any sandbox): never again", pod: pod({ ephemeral: [c("debug")] }), runtime: rt([ctr("a", "running"), ctr("debug", "exited", { sandbox: OLD_SB })]), want: plan([]) },
];

test("computePodActions: the plan for each pod and runtime state", () => {
  for (const row of rows) assert.deepStrictEqual(computePodActions(row.pod, row.runtime, row.probes ?? probes()), row.want, row.name);
});

test("computeContainerActions: an init container failed in the sandbox under Never ends the pass once ephemeral containers started", () => {
  // computePodActions finds such a pod finished first; the container plan still says so on its own.
  const actions = computeContainerActions(pod({ policy: "Never", init: [c("i1")], ephemeral: [c("debug")] }), rt([ctr("i1", "exited", { exit: 1 })]), probes());
  assert.deepStrictEqual(actions, { sandboxId: SB, steps: [{ action: "start", kind: "ephemeral", name: "debug", attempt: 0 }], initialized: false, initFailed: true });
});

test("computeTerminationActions: a pod being deleted stops its containers, then its sidecars in reverse order, then its ready sandboxes", () => {
  const cases: { name: string; pod: Pod; runtime: RuntimePod; want: TerminationActions }[] = [
    {
      name: "containers and sidecars",
      pod: pod({ init: [sidecar("s1"), c("i1"), sidecar("s2")], containers: [c("a"), c("b")] }),
      runtime: rt([ctr("a", "running"), ctr("b", "created"), ctr("s2", "running"), ctr("s1", "running"), ctr("i1", "exited")]),
      want: { containers: [{ name: "a", containerId: id("a") }, { name: "b", containerId: id("b") }], sidecars: [{ name: "s2", containerId: id("s2") }, { name: "s1", containerId: id("s1") }], stopSandboxes: [SB] },
    },
    { name: "nothing left running", pod: pod(), runtime: rt([ctr("a", "exited")], [sandbox(SB, false)]), want: { containers: [], sidecars: [], stopSandboxes: [] } },
    { name: "an old sandbox still ready", pod: pod(), runtime: rt([ctr("a", "running")], [sandbox(SB, true), sandbox(OLD_SB, true)]), want: { containers: [{ name: "a", containerId: id("a") }], sidecars: [], stopSandboxes: [SB, OLD_SB] } },
  ];
  for (const row of cases) assert.deepStrictEqual(computeTerminationActions(row.pod, row.runtime), row.want, row.name);
});
