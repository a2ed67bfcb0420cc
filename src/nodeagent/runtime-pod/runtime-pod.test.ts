// RuntimePodReader against a runtime fake that counts calls: the PLEG's
// lists stand for the filtered lists only when asked for after the pod's last
// sync ended; statuses are reused while the lists show the same state.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Container, CriClient, PodSandbox } from "../cri/index.js";
import { runtimeLabels } from "./labels.js";
import { RuntimePodReader } from "./runtime-pod.js";
import { namingFor } from "../../machinery/naming.js";

const labels = runtimeLabels(namingFor());

function fakeRuntime() {
  const calls: string[] = [];
  const sandboxes: PodSandbox[] = [];
  const containers: Container[] = [];
  const byUid = (l: Record<string, string>, want?: Record<string, string>) => !want || Object.entries(want).every(([k, v]) => l[k] === v);
  const runtime = {
    listPodSandbox: async (r: { filter?: { labelSelector?: Record<string, string> } }) => (calls.push("listPodSandbox"), { items: sandboxes.filter((s) => byUid(s.labels, r.filter?.labelSelector)).map((s) => ({ ...s })) }),
    listContainers: async (r: { filter?: { labelSelector?: Record<string, string> } }) => (calls.push("listContainers"), { containers: containers.filter((c) => byUid(c.labels, r.filter?.labelSelector)).map((c) => ({ ...c })) }),
    podSandboxStatus: async ({ podSandboxId }: { podSandboxId: string }) => {
      calls.push(`podSandboxStatus ${podSandboxId}`);
      const s = sandboxes.find((x) => x.id === podSandboxId)!;
      return { status: { id: s.id, state: s.state, createdAt: s.createdAt, network: { ip: "10.0.0.1", additionalIps: [] }, labels: s.labels, annotations: {} } };
    },
    containerStatus: async ({ containerId }: { containerId: string }) => {
      calls.push(`containerStatus ${containerId}`);
      const c = containers.find((x) => x.id === containerId);
      if (!c) throw Object.assign(new Error("not found"), { code: 5 });
      return { status: { id: c.id, state: c.state, createdAt: c.createdAt, metadata: c.metadata, message: "", annotations: {}, exitCode: c.state === "CONTAINER_EXITED" ? 1 : 0 } };
    },
  } as unknown as CriClient;
  const sandbox = (id: string, uid: string, state: PodSandbox["state"] = "SANDBOX_READY") => sandboxes.push({ id, metadata: null, state, createdAt: sandboxes.length + 1, labels: { [labels.podUid]: uid }, annotations: {}, runtimeHandler: "" });
  const container = (id: string, uid: string, sandboxId: string, state: Container["state"] = "CONTAINER_RUNNING") =>
    containers.push({ id, podSandboxId: sandboxId, metadata: { name: id, attempt: 0 }, image: null, imageRef: "", state, createdAt: containers.length + 1, labels: { [labels.podUid]: uid }, annotations: {}, imageId: "" });
  const relist = async (reader: RuntimePodReader) => {
    const at = performance.now();
    const [{ items }, { containers: cs }] = await Promise.all([runtime.listPodSandbox({}), runtime.listContainers({})]);
    calls.length = 0;
    return reader.observeRelist(at, items, cs);
  };
  return { runtime, calls, sandboxes, containers, sandbox, container, relist };
}

test("without a relist newer than notBefore the runtime is listed; with one, its lists answer", async () => {
  const f = fakeRuntime();
  f.sandbox("s1", "pod-a");
  f.container("c1", "pod-a", "s1");
  const reader = new RuntimePodReader(f.runtime, labels);
  const first = await reader.read("pod-a", 0);
  assert.deepEqual(f.calls.sort(), ["containerStatus c1", "listContainers", "listPodSandbox", "podSandboxStatus s1"], "no relist yet: listed, statuses fetched");
  assert.equal(first.containers[0]!.podSandboxId, "s1");

  const syncEnded = performance.now();
  assert.deepEqual(await f.relist(reader), new Set(["pod-a"]));
  const again = await reader.read("pod-a", syncEnded);
  assert.deepEqual(f.calls, [], "relist after the sync's end, same states: no call at all");
  assert.deepEqual(again, first);

  await reader.read("pod-a", performance.now());
  assert.deepEqual(f.calls.sort(), ["listContainers", "listPodSandbox"], "relist older than notBefore: listed again (statuses still reused)");
  f.calls.length = 0;
  await reader.read("pod-a");
  assert.deepEqual(f.calls.sort(), ["listContainers", "listPodSandbox"], "no notBefore: always listed");
});

test("a changed state fetches the status again; ids gone from the runtime are forgotten; a pod not in the relist reads empty", async () => {
  const f = fakeRuntime();
  f.sandbox("s1", "pod-a");
  f.container("c1", "pod-a", "s1");
  const reader = new RuntimePodReader(f.runtime, labels);
  await f.relist(reader);
  await reader.read("pod-a", 0);
  f.containers[0]!.state = "CONTAINER_EXITED";
  await f.relist(reader);
  const exited = await reader.read("pod-a", 0);
  assert.deepEqual(f.calls, ["containerStatus c1"], "the container's state changed: its status only");
  assert.equal(exited.containers[0]!.state, "CONTAINER_EXITED");
  assert.equal(exited.containers[0]!.exitCode, 1);

  f.containers.length = 0;
  f.sandboxes.length = 0;
  await f.relist(reader);
  assert.deepEqual(await reader.read("pod-a", 0), { uid: "pod-a", sandboxes: [], containers: [] });
  f.sandbox("s1", "pod-a"); // the same id again (a fake's shortcut): its status must be asked for, not remembered
  await f.relist(reader);
  await reader.read("pod-a", 0);
  assert.deepEqual(f.calls, ["podSandboxStatus s1"]);
  assert.deepEqual(await reader.read("pod-b", 0), { uid: "pod-b", sandboxes: [], containers: [] });
});

test("after a pass: a sandbox made is remembered; only the containers the pass touched are read again, by id", async () => {
  const f = fakeRuntime();
  f.sandbox("s1", "pod-a");
  const reader = new RuntimePodReader(f.runtime, labels);
  const made = await reader.sandboxStatus("s1");
  const pod = { uid: "pod-a", sandboxes: [made!], containers: [] };
  f.container("c1", "pod-a", "s1");
  f.calls.length = 0;
  const after = await reader.rereadContainers(pod, new Map([["c1", "s1"]]));
  assert.deepEqual(f.calls, ["containerStatus c1"], "no list: the pass knows the id it created");
  assert.deepEqual(after.containers.map((c) => [c.id, c.state, c.podSandboxId]), [["c1", "CONTAINER_RUNNING", "s1"]]);
  assert.equal(after.sandboxes[0], made);
  f.calls.length = 0;
  await reader.read("pod-a");
  assert.deepEqual(f.calls.sort(), ["listContainers", "listPodSandbox"], "the sandbox made and the container read are remembered");
});

test("a reread keeps the untouched containers as they were, refreshes the touched ones and drops a touched one the runtime no longer has", async () => {
  const f = fakeRuntime();
  f.sandbox("s1", "pod-a");
  f.container("c1", "pod-a", "s1");
  f.container("c2", "pod-a", "s1", "CONTAINER_CREATED");
  f.container("c3", "pod-a", "s1");
  const reader = new RuntimePodReader(f.runtime, labels);
  const pod = await reader.read("pod-a");
  f.containers.find((c) => c.id === "c2")!.state = "CONTAINER_RUNNING";
  f.containers.splice(f.containers.findIndex((c) => c.id === "c3"), 1);
  f.calls.length = 0;
  const after = await reader.rereadContainers(pod, new Map([["c2", "s1"], ["c3", "s1"]]));
  assert.deepEqual(f.calls.sort(), ["containerStatus c2", "containerStatus c3"]);
  assert.deepEqual(after.containers.map((c) => [c.id, c.state]), [["c2", "CONTAINER_RUNNING"], ["c1", "CONTAINER_RUNNING"]]);
  assert.equal(after.containers[1], pod.containers.find((c) => c.id === "c1"), "c1 untouched: the same status object, not read again");
});

test("a read whose last relist is too old waits for the next one instead of listing; with none in time it lists", async () => {
  const f = fakeRuntime();
  f.sandbox("s1", "pod-a");
  f.container("c1", "pod-a", "s1");
  const reader = new RuntimePodReader(f.runtime, labels, 300);
  await f.relist(reader);
  await reader.read("pod-a", 0);
  const syncEnded = performance.now();
  f.calls.length = 0;
  const reading = reader.read("pod-a", syncEnded);
  await new Promise((r) => setTimeout(r, 20));
  await f.relist(reader);
  const pod = await reading;
  assert.deepEqual(f.calls, [], "the relist after the sync's end answered: no list of its own");
  assert.deepEqual(pod.containers.map((c) => c.id), ["c1"]);

  const later = performance.now();
  const began = performance.now();
  await reader.read("pod-a", later);
  assert.ok(performance.now() - began >= 290, "waited for a relist first");
  assert.deepEqual(f.calls.sort(), ["listContainers", "listPodSandbox"], "none came: listed");
});
