// The scheduler against a real in-process API server, with Node objects the
// test creates (no node agent): placement by resources, selectors, taints,
// the Unschedulable condition, preemption, and leader election between two replicas.

import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../machinery/naming.js";
import type { Pod } from "../api/core/types.js";
import type { RestClient, ResourceRef } from "../client/index.js";
import { serveBuiltinApi } from "../client/testing/test-server.js";
import { eventually } from "../controllers/testing.js";
import { MetricsRegistry } from "../component/metrics/index.js";
import { assertExposesMetric, parseExposition } from "../component/metrics/testing.js";
import { Scheduler, startScheduler } from "./index.js";
import type { FilterPlugin, PreBindPlugin } from "./framework/interface.js";
import { nodeResourcesFit } from "./plugins/node-resources-fit/index.js";
import { makeNode, makePod } from "./testing/objects.js";

const PODS: ResourceRef = { group: "", version: "v1", resource: "pods", namespaced: true };
const NODES: ResourceRef = { group: "", version: "v1", resource: "nodes", namespaced: false };

let client: RestClient;
serveBuiltinApi((c) => (client = c));

/** A scheduler (no leader election) for one test, in its own namespace's world. */
async function withScheduler(fn: (s: Scheduler) => Promise<void>, metrics?: MetricsRegistry): Promise<void> {
  const abort = new AbortController();
  let scheduler: Scheduler | undefined;
  const run = startScheduler({ client, leaderElect: false, signal: abort.signal, naming: namingFor(), ...(metrics ? { metrics } : {}), log: (l) => process.env["SCHED_DEBUG"] && console.error(l), onStarted: (s) => (scheduler = s) });
  try {
    await eventually("scheduler started", () => scheduler);
    await fn(scheduler!);
  } finally {
    abort.abort();
    await run;
  }
}

async function pod(namespace: string, name: string): Promise<Pod> {
  return client.get<Pod>(PODS, { namespace, name });
}

async function boundNode(namespace: string, name: string): Promise<string> {
  return eventually(`${namespace}/${name} bound`, async () => (await pod(namespace, name)).spec?.nodeName);
}

async function namespace(name: string): Promise<string> {
  await client.create({ group: "", version: "v1", resource: "namespaces", namespaced: false }, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

async function cleanNodes(): Promise<void> {
  await client.deleteCollection(NODES, {});
}

test("scheduler: pods go to nodes with room; requests count against allocatable, extended resources included", async () => {
  await cleanNodes();
  const ns = await namespace("fit");
  await client.create(NODES, makeNode("small", { cpu: "1" }));
  await client.create(NODES, makeNode("big", { cpu: "8", extended: { "example.com/gpu": "2" } }));
  await withScheduler(async () => {
    await client.create(PODS, makePod("wants-2-cpu", { namespace: ns, cpu: "2" }));
    await client.create(PODS, makePod("wants-gpu", { namespace: ns, requests: { "example.com/gpu": "1" } }));
    assert.equal(await boundNode(ns, "wants-2-cpu"), "big");
    assert.equal(await boundNode(ns, "wants-gpu"), "big");
    const bound = await pod(ns, "wants-2-cpu");
    assert.equal(bound.status?.conditions?.find((c) => c.type === "PodScheduled")?.status, "True");
    // 6.5 of big's 8 cpus would exceed what is left (6): nowhere to go.
    await client.create(PODS, makePod("too-big", { namespace: ns, cpu: "6500m" }));
    const cond = await eventually("Unschedulable condition", async () => (await pod(ns, "too-big")).status?.conditions?.find((c) => c.type === "PodScheduled" && c.reason === "Unschedulable"));
    assert.equal(cond.status, "False");
    assert.equal(cond.message, "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
  });
});

test("scheduler: an unsatisfiable nodeSelector leaves the pod Pending with upstream's condition; a matching node added later takes it", async () => {
  await cleanNodes();
  const ns = await namespace("selector");
  await client.create(NODES, makeNode("n1"));
  await client.create(NODES, makeNode("n2", { labels: { disk: "hdd" } }));
  await withScheduler(async (s) => {
    await client.create(PODS, makePod("wants-ssd", { namespace: ns, spec: { nodeSelector: { disk: "ssd" } } }));
    const cond = await eventually("Unschedulable condition", async () => (await pod(ns, "wants-ssd")).status?.conditions?.find((c) => c.type === "PodScheduled"));
    assert.equal(cond.status, "False");
    assert.equal(cond.reason, "Unschedulable");
    assert.equal(
      cond.message,
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
    );
    const p = await pod(ns, "wants-ssd");
    assert.equal(p.status?.phase, "Pending");
    assert.equal(p.spec?.nodeName, undefined);
    assert.equal(s.queue.where(`${ns}/wants-ssd`), "unschedulable");
    // A NodeAdd event moves it back at once (well before the 5-minute leftover flush).
    await client.create(NODES, makeNode("n3", { labels: { disk: "ssd" } }));
    assert.equal(await boundNode(ns, "wants-ssd"), "n3");
  });
});

test("scheduler: taints keep out pods that do not tolerate them; cordoned nodes take nothing new", async () => {
  await cleanNodes();
  const ns = await namespace("taints");
  await client.create(NODES, makeNode("tainted", { taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] }));
  await client.create(NODES, makeNode("cordoned", { unschedulable: true }));
  await withScheduler(async () => {
    await client.create(PODS, makePod("plain", { namespace: ns }));
    const cond = await eventually("Unschedulable condition", async () => (await pod(ns, "plain")).status?.conditions?.find((c) => c.type === "PodScheduled"));
    assert.equal(
      cond.message,
      "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
    );
    await client.create(PODS, makePod("tolerant", { namespace: ns, spec: { tolerations: [{ key: "dedicated", operator: "Equal", value: "db", effect: "NoSchedule" }] } }));
    assert.equal(await boundNode(ns, "tolerant"), "tainted");
    // Taking the taint off is a NodeTaintChange: the plain pod is retried and lands.
    const node = await client.get(NODES, { name: "tainted" });
    await client.update(NODES, { ...node, spec: { taints: [] } });
    assert.equal(await boundNode(ns, "plain"), "tainted");
  });
});

test("scheduler: a higher-priority pod preempts a lower-priority one, is nominated, then bound", async () => {
  await cleanNodes();
  const ns = await namespace("preempt");
  const pc = { group: "scheduling.orch.io", version: "v1", resource: "priorityclasses", namespaced: false };
  await client.create(pc, { apiVersion: "scheduling.orch.io/v1", kind: "PriorityClass", metadata: { name: "high" }, value: 1000 } as never);
  await client.create(NODES, makeNode("only", { cpu: "2" }));
  await withScheduler(async (s) => {
    await client.create(PODS, makePod("low", { namespace: ns, cpu: "1500m" }));
    await client.create(PODS, makePod("low-small", { namespace: ns, cpu: "200m" }));
    assert.equal(await boundNode(ns, "low"), "only");
    assert.equal(await boundNode(ns, "low-small"), "only");
    await client.create(PODS, makePod("high", { namespace: ns, cpu: "1500m", spec: { priorityClassName: "high" } }));
    // The victim is marked and deleted gracefully (it is bound); the preemptor waits, nominated to the node.
    const victim = await eventually("victim terminating", async () => {
      const p = await pod(ns, "low");
      return p.metadata.deletionTimestamp ? p : undefined;
    });
    assert.equal(victim.status?.conditions?.find((c) => c.type === "DisruptionTarget")?.reason, "PreemptionByScheduler");
    assert.equal(await eventually("nomination", async () => (await pod(ns, "high")).status?.nominatedNodeName), "only");
    assert.equal((await pod(ns, "high")).spec?.nodeName, undefined);
    // No node agent here: the test finishes the deletion as the agent would once the containers stopped.
    await client.delete(PODS, { namespace: ns, name: "low", gracePeriodSeconds: 0 });
    assert.equal(await boundNode(ns, "high"), "only");
    // Only the pod that had to go went: the small one still fits beside the preemptor.
    const left = (await client.list<Pod>(PODS, { namespace: ns })).items.map((p) => p.metadata.name).sort();
    assert.deepEqual(left, ["high", "low-small"]);
    assert.ok(s.queue.counts().active === 0);
  });
});

test("scheduler: gated pods wait until their last gate is removed; a pending pod deleted leaves the queue", async () => {
  await cleanNodes();
  const ns = await namespace("gates");
  await client.create(NODES, makeNode("g1"));
  await withScheduler(async (s) => {
    await client.create(PODS, makePod("gated", { namespace: ns, spec: { schedulingGates: [{ name: "example.com/quota" }] } }));
    await eventually("gated in the queue", () => s.queue.where(`${ns}/gated`) === "gated");
    assert.equal((await pod(ns, "gated")).status?.conditions?.find((c) => c.type === "PodScheduled")?.reason, "SchedulingGated");
    const current = await pod(ns, "gated");
    await client.update(PODS, { ...current, spec: { ...current.spec, schedulingGates: [] } });
    assert.equal(await boundNode(ns, "gated"), "g1");
    await client.create(PODS, makePod("doomed", { namespace: ns, spec: { nodeSelector: { never: "true" } } }));
    await eventually("doomed unschedulable", () => s.queue.where(`${ns}/doomed`) === "unschedulable");
    await client.delete(PODS, { namespace: ns, name: "doomed" });
    await eventually("doomed gone from the queue", () => s.queue.where(`${ns}/doomed`) === undefined);
  });
});

test("scheduler: two replicas with leader election: only the lease holder schedules; the other takes over when it stops", async () => {
  await cleanNodes();
  const ns = await namespace("leader");
  await client.create(NODES, makeNode("n1"));
  const election = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 };
  const started: string[] = [];
  const a = new AbortController();
  const b = new AbortController();
  const runA = startScheduler({ client, signal: a.signal, naming: namingFor(), leaderElection: { ...election, identity: "a" }, onStarted: () => started.push("a") });
  await eventually("a leads", () => started.includes("a"));
  const runB = startScheduler({ client, signal: b.signal, naming: namingFor(), leaderElection: { ...election, identity: "b" }, onStarted: () => started.push("b") });
  await client.create(PODS, makePod("p1", { namespace: ns }));
  assert.equal(await boundNode(ns, "p1"), "n1");
  const lease = await client.get<{ spec?: { holderIdentity?: string } } & Pod>({ group: "coordination.orch.io", version: "v1", resource: "leases", namespaced: true }, { namespace: "orch-system", name: "orch-scheduler" });
  assert.equal(lease.spec?.holderIdentity, "a");
  assert.deepEqual(started, ["a"]);
  a.abort();
  await runA;
  await eventually("b leads", () => started.includes("b"));
  await client.create(PODS, makePod("p2", { namespace: ns }));
  assert.equal(await boundNode(ns, "p2"), "n1");
  b.abort();
  await runB;
  assert.deepEqual(started, ["a", "b"]);
});

test("scheduler metrics: every seed 002 scheduler metric, with exactly the seed's labels", async () => {
  await cleanNodes();
  const ns = await namespace("metrics");
  const pc = { group: "scheduling.orch.io", version: "v1", resource: "priorityclasses", namespaced: false };
  await client.create(pc, { apiVersion: "scheduling.orch.io/v1", kind: "PriorityClass", metadata: { name: "metrics-high" }, value: 2000 } as never);
  await client.create(NODES, makeNode("m1", { cpu: "1" }));
  const registry = new MetricsRegistry();
  await withScheduler(async (s) => {
    const low = makePod("low", { namespace: ns, cpu: "1", memory: "64Mi" });
    low.spec!.containers![0]!.resources!.limits = { cpu: "1", memory: "64Mi" };
    await client.create(PODS, low);
    assert.equal(await boundNode(ns, "low"), "m1");
    await client.create(PODS, makePod("gated", { namespace: ns, spec: { schedulingGates: [{ name: "example.com/hold" }] } }));
    await client.create(PODS, makePod("nowhere", { namespace: ns, spec: { nodeSelector: { disk: "ssd" } } }));
    await client.create(PODS, makePod("high", { namespace: ns, cpu: "1", spec: { priorityClassName: "metrics-high" } }));
    await eventually("nomination", async () => (await pod(ns, "high")).status?.nominatedNodeName);
    await eventually("queues settled", () => s.queue.where(`${ns}/nowhere`) === "unschedulable" && s.queue.where(`${ns}/gated`) === "gated");
    const text = registry.expose();
    const families = parseExposition(text);
    const seed: [string, string, string[]][] = [
      ["orch_pod_resource_request", "custom", ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"]],
      ["orch_pod_resource_limit", "custom", ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"]],
      ["scheduler_framework_extension_point_duration_seconds", "histogram", ["extension_point", "profile", "status"]],
      ["scheduler_pending_pods", "gauge", ["queue"]],
      ["scheduler_pod_scheduling_attempts", "histogram", []],
      ["scheduler_preemption_attempts_total", "counter", []],
      ["scheduler_preemption_victims", "histogram", []],
      ["scheduler_queue_incoming_pods_total", "counter", ["event", "queue"]],
      ["scheduler_schedule_attempts_total", "counter", ["profile", "result"]],
      ["scheduler_scheduling_attempt_duration_seconds", "histogram", ["profile", "result"]],
      ["scheduler_pod_scheduling_sli_duration_seconds", "histogram", ["attempts"]],
    ];
    for (const [name, kind, labels] of seed) assertExposesMetric(families, { name, kind, labels });
    const value = (name: string, labels: Record<string, string>) =>
      families.get(name)!.samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))?.value;
    assert.equal(value("scheduler_pending_pods", { queue: "gated" }), 1);
    for (const [queue, n] of Object.entries(s.queue.counts())) assert.equal(value("scheduler_pending_pods", { queue }), n, queue);
    assert.ok(value("scheduler_queue_incoming_pods_total", { queue: "gated", event: "PodAdd" })! >= 1);
    assert.equal(value("scheduler_preemption_attempts_total", {}), 1);
    assert.equal(value("scheduler_schedule_attempts_total", { result: "scheduled", profile: "default-scheduler" }), 1);
    assert.equal(value("orch_pod_resource_request", { pod: "low", resource: "cpu", unit: "cores", node: "m1" }), 1);
    assert.equal(value("orch_pod_resource_request", { pod: "low", resource: "memory", unit: "bytes" }), 64 * 1024 * 1024);
    assert.equal(value("orch_pod_resource_request", { pod: "high", resource: "cpu", priority: "2000", node: "" }), 1);
    assert.equal(value("orch_pod_resource_limit", { pod: "low", resource: "memory", unit: "bytes" }), 64 * 1024 * 1024);
  }, registry);
});

test("scheduler: a plugin that throws on one pod costs that pod a retry; the others are still scheduled", async () => {
  await cleanNodes();
  const ns = await namespace("robust");
  await client.create(NODES, makeNode("r1"));
  const broken: FilterPlugin = {
    name: "Broken",
    events: [],
    filter(_state, pod) {
      if (pod.labels["boom"]) throw new Error("plugin bug");
      return undefined;
    },
  };
  const lines: string[] = [];
  const s = new Scheduler({ client, naming: namingFor(), plugins: [broken, nodeResourcesFit], log: (l) => lines.push(l) });
  const abort = new AbortController();
  const run = s.run(abort.signal);
  try {
    await client.create(PODS, makePod("boom", { namespace: ns, labels: { boom: "1" } }));
    await client.create(PODS, makePod("fine", { namespace: ns }));
    assert.equal(await boundNode(ns, "fine"), "r1");
    await eventually("the failure logged", () => lines.some((l) => l.includes(`scheduling ${ns}/boom failed: plugin bug`)));
    assert.equal(s.queue.where(`${ns}/boom`), "backoff");
  } finally {
    abort.abort();
    await run;
  }
});

test("scheduler: a binding refused because the pod is bound already drops the pod from the queue (no back-off retries, no log line)", async () => {
  await cleanNodes();
  const ns = await namespace("bound-elsewhere");
  await client.create(NODES, makeNode("b1"));
  await client.create(NODES, makeNode("b2"));
  // Stands for a cache behind the API server (a restarted scheduler listing from a lagging watch cache): just
  // before this scheduler's binding, the pod is bound by someone else, to the node this scheduler did not pick.
  const bindsFirst: PreBindPlugin = {
    name: "BindsFirst",
    events: [],
    async preBind(_state, pod, nodeName) {
      const other = nodeName === "b1" ? "b2" : "b1";
      await client.create(PODS, { apiVersion: "v1", kind: "Binding", metadata: { name: pod.pod.metadata.name, namespace: ns }, target: { kind: "Node", name: other } } as never, { subresource: "binding", namespace: ns });
    },
  };
  const lines: string[] = [];
  const s = new Scheduler({ client, naming: namingFor(), plugins: [nodeResourcesFit, bindsFirst], log: (l) => lines.push(l) });
  const abort = new AbortController();
  const run = s.run(abort.signal);
  try {
    await client.create(PODS, makePod("p", { namespace: ns }));
    const node = await boundNode(ns, "p");
    // Its own binding, refused, ends the pod's cycle: out of flight, and not into back-off.
    await eventually("the scheduler's binding answered", () => (s.queue.where(`${ns}/p`) !== "in-flight" ? true : undefined));
    assert.equal(s.queue.where(`${ns}/p`), undefined, "not queued for a retry");
    assert.deepEqual(lines.filter((l) => l.includes("binding")), [], "no failure logged");
    assert.equal((await pod(ns, "p")).spec?.nodeName, node, "the first binding stands");
  } finally {
    abort.abort();
    await run;
  }
});
