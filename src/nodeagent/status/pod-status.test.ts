import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import type { RuntimeContainer, RuntimePod } from "../runtime-pod/runtime-pod.js";
import { buildPodStatus } from "./pod-status.js";

const NS = 1e6;
function container(name: string, state: RuntimeContainer["state"], extra: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id: `${name}-${extra.metadata?.attempt ?? 0}`, podSandboxId: "sb", metadata: { name, attempt: 0 }, state, createdAt: 1, startedAt: 1000 * NS, finishedAt: state === "CONTAINER_EXITED" ? 2000 * NS : 0,
    exitCode: 0, image: null, imageRef: "sha256:abc", reason: "", message: "", labels: {}, annotations: {}, mounts: [], logPath: "", resources: null, imageId: "", user: null, imageSource: "", ...extra,
  };
}
const runtime = (containers: RuntimeContainer[]): RuntimePod => ({
  uid: "u",
  sandboxes: [{ id: "sb", metadata: null, state: "SANDBOX_READY", createdAt: 1, network: { ip: "10.0.0.9", additionalIps: [] }, linux: null, labels: {}, annotations: {}, runtimeHandler: "" }],
  containers,
});
const pod = (restartPolicy: string, init = false): Pod => ({
  apiVersion: "v1", kind: "Pod", metadata: { name: "p", uid: "u" },
  spec: { restartPolicy, ...(init ? { initContainers: [{ name: "init", image: "busybox" }] } : {}), containers: [{ name: "a", image: "busybox" }, { name: "b", image: "busybox" }] },
});
const status = (p: Pod, rp: RuntimePod, waiting = new Map()) =>
  buildPodStatus({ pod: p, runtime: rp, waiting, ready: () => true, started: () => true, hostIP: "192.0.2.1", startTime: "2026-01-01T00:00:00Z", runtimeName: "containerd", now: new Date(0) });

test("pod status: phase by upstream's rules", () => {
  const cases: [string, RuntimeContainer[], string][] = [
    ["Always", [], "Pending"],
    ["Always", [container("a", "CONTAINER_RUNNING"), container("b", "CONTAINER_RUNNING")], "Running"],
    ["Always", [container("a", "CONTAINER_EXITED"), container("b", "CONTAINER_EXITED")], "Running"],
    ["Never", [container("a", "CONTAINER_EXITED"), container("b", "CONTAINER_EXITED")], "Succeeded"],
    ["Never", [container("a", "CONTAINER_EXITED", { exitCode: 1 }), container("b", "CONTAINER_EXITED")], "Failed"],
    ["OnFailure", [container("a", "CONTAINER_EXITED", { exitCode: 1 }), container("b", "CONTAINER_EXITED")], "Running"],
    ["Never", [container("a", "CONTAINER_RUNNING")], "Pending"],
  ];
  for (const [policy, containers, phase] of cases) assert.equal(status(pod(policy), runtime(containers)).phase, phase, `${policy} ${containers.map((c) => c.state)}`);
});

test("pod status: container statuses, conditions, back-off waiting with the last exit, init containers pending", () => {
  const s = status(pod("Always"), runtime([container("a", "CONTAINER_RUNNING"), container("b", "CONTAINER_EXITED", { exitCode: 2, metadata: { name: "b", attempt: 3 } })]), new Map([["b", { reason: "CrashLoopBackOff", message: "back-off 40s" }]]));
  const [a, b] = s.containerStatuses!;
  assert.deepEqual([a!.ready, a!.started, a!.restartCount, (a as { containerID?: string }).containerID, a!.imageID], [true, true, 0, "containerd://a-0", "sha256:abc"]);
  assert.deepEqual(b!.state, { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s" } });
  assert.equal(b!.lastState?.terminated?.exitCode, 2);
  assert.equal(b!.lastState?.terminated?.reason, "Error");
  assert.equal(b!.restartCount, 3);
  assert.equal(s.phase, "Running");
  assert.deepEqual(s.conditions?.map((c) => [c.type, c.status, c.reason ?? ""]), [["Initialized", "True", ""], ["Ready", "False", "ContainersNotReady"], ["ContainersReady", "False", "ContainersNotReady"], ["PodScheduled", "True", ""]]);
  assert.equal(s.conditions?.[1]?.message, "containers with unready status: [b]");
  assert.deepEqual([s.podIP, s.hostIP, s.startTime], ["10.0.0.9", "192.0.2.1", "2026-01-01T00:00:00Z"]);

  const init = status(pod("Always", true), runtime([container("init", "CONTAINER_RUNNING")]));
  assert.equal(init.phase, "Pending");
  assert.equal(init.containerStatuses![0]!.state?.waiting?.reason, "PodInitializing");
  assert.equal(init.conditions?.[0]?.reason, "ContainersNotInitialized");
});

test("pod status: a RestartNever pod failed by its second init container stays not Initialized; a succeeded pod is Initialized (PodCompleted)", () => {
  const p: Pod = { ...pod("Never"), spec: { ...pod("Never").spec, initContainers: [{ name: "init1", image: "busybox" }, { name: "init2", image: "busybox" }] } };
  const failed = status(p, runtime([container("init1", "CONTAINER_EXITED"), container("init2", "CONTAINER_EXITED", { exitCode: 1 })]));
  assert.equal(failed.phase, "Failed");
  assert.deepEqual(failed.conditions?.[0], { type: "Initialized", status: "False", reason: "ContainersNotInitialized", message: "containers with incomplete status: [init2]", lastProbeTime: null, lastTransitionTime: "1970-01-01T00:00:00Z" });
  assert.equal(failed.containerStatuses?.[0]?.state?.waiting?.reason, "PodInitializing");
  const succeeded = status(pod("Never"), runtime([container("a", "CONTAINER_EXITED"), container("b", "CONTAINER_EXITED")]));
  assert.equal(succeeded.phase, "Succeeded");
  assert.deepEqual([succeeded.conditions?.[0]?.status, succeeded.conditions?.[0]?.reason], ["True", "PodCompleted"]);
});

test("pod status: a started sidecar initializes the pod and counts for readiness; a crashed one does not undo initialization", () => {
  const withSidecar: Pod = { ...pod("Never"), spec: { ...pod("Never").spec, initContainers: [{ name: "proxy", image: "busybox", restartPolicy: "Always" }] } };
  const starting = status(withSidecar, runtime([container("proxy", "CONTAINER_CREATED")]));
  assert.equal(starting.phase, "Pending");
  assert.deepEqual(starting.conditions?.[0], { type: "Initialized", status: "False", reason: "ContainersNotInitialized", message: "containers with incomplete status: [proxy]", lastProbeTime: null, lastTransitionTime: "1970-01-01T00:00:00Z" });

  const running = status(withSidecar, runtime([container("proxy", "CONTAINER_RUNNING"), container("a", "CONTAINER_RUNNING"), container("b", "CONTAINER_RUNNING")]));
  assert.equal(running.phase, "Running");
  assert.deepEqual(running.initContainerStatuses?.map((s) => [s.name, Object.keys(s.state ?? {})[0], s.started, s.ready]), [["proxy", "running", true, true]]);
  assert.deepEqual(running.conditions?.map((c) => [c.type, c.status]), [["Initialized", "True"], ["Ready", "True"], ["ContainersReady", "True"], ["PodScheduled", "True"]]);

  // The sidecar crashed and backs off: the pod stays initialized, but it is not ready.
  const crashed = status(withSidecar, runtime([container("proxy", "CONTAINER_EXITED", { exitCode: 1 }), container("a", "CONTAINER_RUNNING"), container("b", "CONTAINER_RUNNING")]), new Map([["proxy", { reason: "CrashLoopBackOff" }]]));
  assert.equal(crashed.phase, "Running");
  assert.deepEqual(crashed.conditions?.slice(0, 2).map((c) => [c.type, c.status, c.message ?? ""]), [["Initialized", "True", ""], ["Ready", "False", "containers with unready status: [proxy]"]]);

  // The containers finished with restartPolicy Never: the pod succeeds whatever the sidecar did.
  const done = status(withSidecar, runtime([container("proxy", "CONTAINER_EXITED", { exitCode: 137 }), container("a", "CONTAINER_EXITED"), container("b", "CONTAINER_EXITED")]));
  assert.equal(done.phase, "Succeeded");
});

test("pod status: ephemeral containers are listed (waiting, running, exited) but never ready and count for neither phase nor readiness", () => {
  const p = pod("Always");
  p.spec!.ephemeralContainers = [{ name: "dbg", image: "busybox" }, { name: "gone", image: "busybox" }, { name: "new", image: "busybox" }];
  const rp = runtime([container("a", "CONTAINER_RUNNING"), container("b", "CONTAINER_RUNNING"), container("dbg", "CONTAINER_RUNNING"), container("gone", "CONTAINER_EXITED", { exitCode: 1 })]);
  const s = status(p, rp, new Map([["new", { reason: "ErrImagePull", message: "no such image" }]]));
  assert.equal(s.phase, "Running");
  assert.equal(s.conditions!.find((c) => c.type === "Ready")!.status, "True");
  const eph = s.ephemeralContainerStatuses!;
  assert.deepEqual(eph.map((c) => [c.name, Object.keys(c.state!)[0], c.ready, c.restartCount]), [
    ["dbg", "running", false, 0],
    ["gone", "terminated", false, 0],
    ["new", "waiting", false, 0],
  ]);
  assert.equal(eph[2]!.state!.waiting!.reason, "ErrImagePull");
  assert.equal(status(pod("Always"), rp).ephemeralContainerStatuses, undefined, "none without ephemeral containers");
});

test("pod status: an init container that completed successfully is ready; a running or failed one is not", () => {
  const ready = (c: RuntimeContainer) => status(pod("Never", true), runtime([c])).initContainerStatuses![0]!.ready;
  assert.equal(ready(container("init", "CONTAINER_EXITED")), true);
  assert.equal(ready(container("init", "CONTAINER_EXITED", { exitCode: 1 })), false);
  assert.equal(ready(container("init", "CONTAINER_RUNNING")), false);
});
