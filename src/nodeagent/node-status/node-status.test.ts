// The node status manager against a real in-process API server: a node that
// registers NotReady turns Ready within a fraction of a second once its
// signals do, not a whole nodeStatusUpdateFrequency later; after that the
// normal period applies. Pressure conditions against eviction thresholds (and
// back), and the re-post every nodeStatusReportFrequency with nothing changed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import type { Condition, Node } from "../../api/core/types.js";
import type { RestClient } from "../../client/index.js";
import { serveBuiltinApi } from "../../client/testing/test-server.js";
import { eventually } from "../../controllers/testing.js";
import { NODES, NodeStatusManager, nodeConditions, type NodeFacts, type Signals } from "./node-status.js";

let client: RestClient;
serveBuiltinApi((c) => (client = c));

// Not `n << 30`: shifts are 32-bit signed in JavaScript (2 << 30 is negative).
const GiB = 2 ** 30;
const MiB = 2 ** 20;

const facts = (nodeName: string): NodeFacts => ({
  nodeName, hostname: nodeName, internalIP: "10.0.0.1", cpu: 2, memoryBytes: 4 * GiB, ephemeralStorageBytes: 20 * GiB, maxPods: 110,
  evictionHard: {}, runtimeVersion: "test://1", agentVersion: "v0", port: 10250, declaredFeatures: [],
});

function signals(runtimeOk: () => boolean): () => Promise<Signals> {
  return async () => ({
    memoryAvailableBytes: 2 * GiB, memoryTotalBytes: 4 * GiB,
    fs: { capacityBytes: 20 * GiB, availableBytes: 10 * GiB, inodes: 1e6, inodesFree: 5e5 },
    pids: { max: 1e5, running: 100 },
    runtimeReady: { ok: runtimeOk(), message: "runtime not ready yet" },
    networkReady: { ok: true, message: "" },
    pleg: { ok: true, message: "" },
  });
}

const ready = async (name: string) => ((await client.get<Node>(NODES, { name })).status?.conditions ?? []).find((c) => c.type === "Ready")?.status;

test("a node registered NotReady is reported Ready as soon as its signals are, not a status period later", async () => {
  let runtimeOk = false;
  const abort = new AbortController();
  const m = new NodeStatusManager({ client, naming: namingFor(), facts: () => facts("fast"), signals: signals(() => runtimeOk), updateFrequencyMs: 60_000, reportFrequencyMs: 300_000 });
  try {
    await m.register();
    assert.equal(await ready("fast"), "False");
    void m.run(abort.signal);
    runtimeOk = true;
    const t0 = Date.now();
    await eventually("Ready=True", async () => ((await ready("fast")) === "True" ? true : undefined), 5000);
    assert.ok(Date.now() - t0 < 2000, `Ready after ${Date.now() - t0} ms with a 60 s status period`);
    // Once Ready, the normal period: a later change waits for it.
    runtimeOk = false;
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await ready("fast"), "True", "no fast updates after the first Ready");
  } finally {
    abort.abort();
  }
});

const THRESHOLDS = { "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "pid.available": "10%" };
const healthy = (): Signals => ({
  memoryAvailableBytes: 2 * GiB, memoryTotalBytes: 4 * GiB,
  fs: { capacityBytes: 20 * GiB, availableBytes: 10 * GiB, inodes: 1e6, inodesFree: 5e5 },
  pids: { max: 1e5, running: 100 },
  runtimeReady: { ok: true, message: "" }, networkReady: { ok: true, message: "" }, pleg: { ok: true, message: "" },
});
const pressures = (conditions: readonly Condition[]) =>
  Object.fromEntries(conditions.filter((c) => c.type?.endsWith("Pressure")).map((c) => [c.type, c.status]));

test("MemoryPressure, DiskPressure (bytes or inodes) and PIDPressure turn True below their eviction thresholds and False again above", () => {
  const f = { ...facts("pressed"), evictionHard: THRESHOLDS };
  const naming = namingFor();
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  const calm = nodeConditions(naming, f, healthy(), [], at(0));
  assert.deepEqual(pressures(calm), { MemoryPressure: "False", DiskPressure: "False", PIDPressure: "False" });
  assert.equal(calm.find((c) => c.type === "Ready")?.status, "True");

  const cases: [string, Signals][] = [
    ["MemoryPressure", { ...healthy(), memoryAvailableBytes: 50 * MiB }], // under 100Mi
    ["DiskPressure", { ...healthy(), fs: { ...healthy().fs, availableBytes: 1 * GiB } }], // 5% of 20Gi, under 10%
    ["DiskPressure", { ...healthy(), fs: { ...healthy().fs, inodesFree: 1e4 } }], // 1% of inodes, under 5%
    ["PIDPressure", { ...healthy(), pids: { max: 1e5, running: 95_000 } }], // 5% left, under 10%
  ];
  for (const [type, pressed] of cases) {
    const hot = nodeConditions(naming, f, pressed, calm, at(10));
    assert.deepEqual(pressures(hot), { MemoryPressure: "False", DiskPressure: "False", PIDPressure: "False", [type]: "True" }, `${type} alone is True`);
    const c = hot.find((x) => x.type === type)!;
    assert.match(c.reason ?? "", /^NodeAgentHas(InsufficientMemory|DiskPressure|InsufficientPID)$/);
    assert.equal(c.lastTransitionTime, "2026-01-01T00:00:10Z", "the transition is stamped");
    const back = nodeConditions(naming, f, healthy(), hot, at(20));
    assert.equal(back.find((x) => x.type === type)?.status, "False", `${type} clears when the signal recovers`);
    assert.equal(back.find((x) => x.type === type)?.lastTransitionTime, "2026-01-01T00:00:20Z");
  }
  // Without a pid.available threshold there is no PID pressure however few are left.
  assert.equal(pressures(nodeConditions(naming, facts("no-pid"), { ...healthy(), pids: { max: 1e5, running: 99_999 } }, [], at(0)))["PIDPressure"], "False");
});

test("the manager posts MemoryPressure=True when memory runs short and False when it recovers", async () => {
  let signal = healthy();
  const abort = new AbortController();
  const m = new NodeStatusManager({ client, naming: namingFor(), facts: () => ({ ...facts("memory"), evictionHard: THRESHOLDS }), signals: async () => signal, updateFrequencyMs: 50, reportFrequencyMs: 300_000 });
  const memory = async () => ((await client.get<Node>(NODES, { name: "memory" })).status?.conditions ?? []).find((c) => c.type === "MemoryPressure")?.status;
  try {
    await m.register();
    assert.equal(await memory(), "False");
    void m.run(abort.signal);
    signal = { ...healthy(), memoryAvailableBytes: 10 * MiB };
    await eventually("MemoryPressure=True posted", async () => ((await memory()) === "True" ? true : undefined), 5000);
    signal = healthy();
    await eventually("MemoryPressure=False posted", async () => ((await memory()) === "False" ? true : undefined), 5000);
  } finally {
    abort.abort();
  }
});

test("with nothing changed the status is re-posted after nodeStatusReportFrequency, not every nodeStatusUpdateFrequency", async () => {
  const REPORT_MS = 800;
  const abort = new AbortController();
  const m = new NodeStatusManager({ client, naming: namingFor(), facts: () => facts("quiet"), signals: async () => healthy(), updateFrequencyMs: 50, reportFrequencyMs: REPORT_MS });
  const version = async () => (await client.get<Node>(NODES, { name: "quiet" })).metadata.resourceVersion;
  try {
    await m.register();
    const posted = Date.now();
    const before = await version();
    void m.run(abort.signal);
    // Looked at every 50 ms, but with no change the next write waits for the report interval.
    const after = await eventually("the periodic re-post", async () => { const v = await version(); return v !== before ? v : undefined; }, 5000);
    const elapsed = Date.now() - posted;
    assert.ok(elapsed >= REPORT_MS - 50, `re-posted after ${elapsed} ms, not before the ${REPORT_MS} ms report interval`);
    assert.ok(elapsed < REPORT_MS + 2000, `re-posted after ${elapsed} ms`);
    const node = await client.get<Node>(NODES, { name: "quiet" });
    assert.ok(after);
    assert.equal(node.status?.conditions?.find((c) => c.type === "Ready")?.status, "True", "the same status, re-posted");
  } finally {
    abort.abort();
  }
});

test("capacity someone else adds to the Node (an extended resource) becomes allocatable at the next status update, and leaves it with the capacity", async () => {
  const abort = new AbortController();
  const m = new NodeStatusManager({ client, naming: namingFor(), facts: () => facts("extended"), signals: async () => healthy(), updateFrequencyMs: 50, reportFrequencyMs: 300_000 });
  const node = () => client.get<Node>(NODES, { name: "extended" });
  try {
    await m.register();
    void m.run(abort.signal);
    // What upstream's preemption conformance spec does: a fake extended resource patched into capacity only.
    await client.patch<Node>(NODES, { name: "extended", subresource: "status", patch: { status: { capacity: { "scheduling.k8s.io/foo": "5" } } } });
    await eventually("allocatable scheduling.k8s.io/foo", async () => (await node()).status?.allocatable?.["scheduling.k8s.io/foo"] === "5" || undefined, 5000);
    assert.equal((await node()).status?.allocatable?.["cpu"], "2", "the agent's own resources stay");
    await client.patch<Node>(NODES, { name: "extended", subresource: "status", patch: { status: { capacity: { "scheduling.k8s.io/foo": null } } } });
    await eventually("allocatable without scheduling.k8s.io/foo", async () => !("scheduling.k8s.io/foo" in ((await node()).status?.allocatable ?? {})) || undefined, 5000);
  } finally {
    abort.abort();
  }
});

test("conditions the server holds otherwise (the node lifecycle controller's Unknown) are written back at the next period, not a report interval later", async () => {
  const abort = new AbortController();
  const m = new NodeStatusManager({ client, naming: namingFor(), facts: () => facts("overwritten"), signals: async () => healthy(), updateFrequencyMs: 50, reportFrequencyMs: 60_000 });
  try {
    await m.register();
    void m.run(abort.signal);
    await eventually("Ready", async () => ((await ready("overwritten")) === "True" ? true : undefined), 5000);
    // What the node lifecycle controller writes when the heartbeats stopped for longer than the grace period.
    const node = await client.get<Node>(NODES, { name: "overwritten" });
    const unknown = (node.status?.conditions ?? []).map((c): Condition => ({ ...c, status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status." }));
    await client.patch(NODES, { name: "overwritten", subresource: "status", patch: { status: { conditions: unknown } } });
    assert.equal(await ready("overwritten"), "Unknown");
    const from = Date.now();
    await eventually("Ready again", async () => ((await ready("overwritten")) === "True" ? true : undefined), 5000);
    assert.ok(Date.now() - from < 5000, "within a few periods, not the 60-s report interval");
  } finally {
    abort.abort();
  }
});
