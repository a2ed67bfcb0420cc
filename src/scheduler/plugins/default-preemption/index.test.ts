import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../../machinery/naming.js";
import type { PodDisruptionBudget } from "../../../api/policy/types.js";
import { Diagnosis } from "../../framework/fit-error.js";
import { Framework } from "../../framework/framework.js";
import { PodInfo } from "../../framework/pod-info.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { cluster, nodeInfo } from "../../testing/cluster.js";
import { defaultPlugins } from "../index.js";
import { preempt } from "./index.js";

const framework = new Framework({ plugins: defaultPlugins(namingFor()) });
const p = (name: string, cpu: string, priority: number, labels?: Record<string, string>) => makePod(name, { cpu, spec: { priority }, ...(labels ? { labels } : {}) });

function diagnose(pod: PodInfo, nodes: ReturnType<typeof nodeInfo>[]): Diagnosis {
  const d = new Diagnosis();
  for (const n of nodes) {
    const state = new Map();
    const pre = framework.runPreFilter(state, pod, cluster(nodes));
    const s = framework.runFilters(state, pod, n, pre.filters);
    if (s) d.record(n.name, s);
  }
  return d;
}

test("preemption: picks the node with the fewest, least important victims and reprieves what can stay", () => {
  const nodes = [
    nodeInfo(makeNode("a", { cpu: "2" }), [p("a-mid", "1500m", 50), p("a-tiny", "100m", 1)]),
    nodeInfo(makeNode("b", { cpu: "2" }), [p("b-low", "1500m", 10), p("b-low-2", "300m", 10)]),
  ];
  const pod = new PodInfo(p("high", "1500m", 100));
  const r = preempt({ pod, cluster: cluster(nodes), framework, diagnosis: diagnose(pod, nodes), pdbs: [] });
  assert.equal(r.nodeName, "b");
  assert.deepEqual(r.victims.map((v) => v.key), ["default/b-low"]);
});

test("preemption: a PodDisruptionBudget steers it to the node whose victims violate none", () => {
  const nodes = [
    nodeInfo(makeNode("a", { cpu: "1" }), [p("a-low", "1", 10, { app: "protected" })]),
    nodeInfo(makeNode("b", { cpu: "1" }), [p("b-low", "1", 20)]),
  ];
  const pdb: PodDisruptionBudget = {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "keep", namespace: "default", generation: 1 },
    spec: { minAvailable: 1, selector: { matchLabels: { app: "protected" } } },
    status: { observedGeneration: 1, disruptionsAllowed: 0 },
  };
  const pod = new PodInfo(p("high", "1", 100));
  const diagnosis = diagnose(pod, nodes);
  assert.equal(preempt({ pod, cluster: cluster(nodes), framework, diagnosis, pdbs: [] }).nodeName, "a", "without the budget the lower victim wins");
  assert.equal(preempt({ pod, cluster: cluster(nodes), framework, diagnosis, pdbs: [pdb] }).nodeName, "b");
});

test("preemption: not helpful where nothing lower-priority could make room, with upstream's messages", () => {
  const nodes = [
    nodeInfo(makeNode("same", { cpu: "1" }), [p("peer", "1", 100)]),
    nodeInfo(makeNode("wrong", { cpu: "8", labels: { disk: "hdd" } })),
  ];
  const pod = new PodInfo(makePod("high", { cpu: "1", spec: { priority: 100, nodeSelector: { disk: "ssd" } } }));
  const r = preempt({ pod, cluster: cluster(nodes), framework, diagnosis: diagnose(pod, nodes), pdbs: [] });
  assert.equal(r.nodeName, undefined);
  assert.equal(r.message, "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  assert.equal(r.clearNomination, true, "an earlier nomination is void");
  const never = new PodInfo(makePod("never", { cpu: "1", spec: { priority: 100, preemptionPolicy: "Never" } }));
  const refused = preempt({ pod: never, cluster: cluster(nodes), framework, diagnosis: diagnose(never, nodes), pdbs: [] });
  assert.equal(refused.message, "preemption: not eligible due to preemptionPolicy=Never.");
  assert.equal(refused.clearNomination, undefined);
});
