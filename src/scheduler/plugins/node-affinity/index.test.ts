import { test } from "node:test";
import assert from "node:assert/strict";
import { PodInfo } from "../../framework/pod-info.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { nodeAffinity } from "./index.js";

const nodes = [
  nodeInfo(makeNode("ssd-a", { labels: { disk: "ssd", zone: "a", gen: "5" } })),
  nodeInfo(makeNode("hdd-b", { labels: { disk: "hdd", zone: "b", gen: "3" } })),
  nodeInfo(makeNode("bare")),
];
const required = (terms: unknown[]) => ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });

test("NodeAffinity: nodeSelector, and required terms (ORed terms, ANDed expressions, all operators, matchFields)", () => {
  const miss = "UnschedulableAndUnresolvable: node(s) didn't match Pod's node affinity/selector";
  assert.deepEqual(reasons(nodeAffinity, makePod("p"), nodes), { "ssd-a": "skip", "hdd-b": "skip", bare: "skip" });
  assert.deepEqual(reasons(nodeAffinity, makePod("p", { spec: { nodeSelector: { disk: "ssd" } } }), nodes), { "ssd-a": "fits", "hdd-b": miss, bare: miss });
  const terms = required([
    { matchExpressions: [{ key: "gen", operator: "Gt", values: ["4"] }, { key: "zone", operator: "In", values: ["a", "c"] }] },
    { matchFields: [{ key: "metadata.name", operator: "In", values: ["bare"] }] },
  ]);
  assert.deepEqual(reasons(nodeAffinity, makePod("p", { spec: terms }), nodes), { "ssd-a": "fits", "hdd-b": miss, bare: "fits" });
  const notIn = required([{ matchExpressions: [{ key: "disk", operator: "NotIn", values: ["ssd"] }, { key: "gen", operator: "Lt", values: ["4"] }] }]);
  assert.deepEqual(reasons(nodeAffinity, makePod("p", { spec: notIn }), nodes), { "ssd-a": miss, "hdd-b": "fits", bare: miss });
  const absent = required([{ matchExpressions: [{ key: "disk", operator: "DoesNotExist" }] }]);
  assert.deepEqual(reasons(nodeAffinity, makePod("p", { spec: absent }), nodes), { "ssd-a": miss, "hdd-b": miss, bare: "fits" });
  // An empty term matches nothing.
  assert.deepEqual(reasons(nodeAffinity, makePod("p", { spec: required([{}]) }), nodes), { "ssd-a": miss, "hdd-b": miss, bare: miss });
});

test("NodeAffinity score: preferred terms add their weights, normalized to 0–100", () => {
  const pod = new PodInfo(
    makePod("p", {
      spec: {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 10, preference: { matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] } },
              { weight: 5, preference: { matchExpressions: [{ key: "zone", operator: "Exists" }] } },
            ],
          },
        },
      },
    }),
  );
  const scores = nodes.map((n) => nodeAffinity.score(new Map(), pod, n));
  assert.deepEqual(scores, [15, 5, 0]);
  nodeAffinity.normalize!(scores);
  assert.deepEqual(scores, [100, (5 * 100) / 15, 0]);
});
