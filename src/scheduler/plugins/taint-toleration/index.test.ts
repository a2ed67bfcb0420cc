import { test } from "node:test";
import assert from "node:assert/strict";
import { PodInfo } from "../../framework/pod-info.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { taintToleration, toleratesTaint } from "./index.js";

test("TaintToleration: NoSchedule and NoExecute taints need a toleration; PreferNoSchedule only scores", () => {
  const nodes = [
    nodeInfo(makeNode("not-ready", { taints: [{ key: "node.orch.io/not-ready", effect: "NoSchedule" }] })),
    nodeInfo(makeNode("db", { taints: [{ key: "dedicated", value: "db", effect: "NoExecute" }] })),
    nodeInfo(makeNode("soft", { taints: [{ key: "spot", effect: "PreferNoSchedule" }] })),
  ];
  assert.deepEqual(reasons(taintToleration, makePod("p"), nodes), {
    "not-ready": "UnschedulableAndUnresolvable: node(s) had untolerated taint {node.orch.io/not-ready: }",
    db: "UnschedulableAndUnresolvable: node(s) had untolerated taint {dedicated: db}",
    soft: "fits",
  });
  const tolerant = makePod("t", { spec: { tolerations: [{ key: "dedicated", operator: "Equal", value: "db" }, { operator: "Exists", effect: "NoSchedule" }] } });
  assert.deepEqual(Object.values(reasons(taintToleration, tolerant, nodes)), ["fits", "fits", "fits"]);
  const scores = nodes.map((n) => taintToleration.score(new Map(), new PodInfo(makePod("p")), n));
  taintToleration.normalize!(scores);
  assert.deepEqual(scores, [100, 100, 0]);
});

test("TaintToleration: toleration matching as upstream (empty key with Exists matches all, effect must match when set)", () => {
  const taint = { key: "k", value: "v", effect: "NoSchedule" };
  assert.equal(toleratesTaint({ operator: "Exists" }, taint), true);
  assert.equal(toleratesTaint({ key: "k", operator: "Exists" }, taint), true);
  assert.equal(toleratesTaint({ key: "k", value: "v" }, taint), true);
  assert.equal(toleratesTaint({ key: "k", value: "w" }, taint), false);
  assert.equal(toleratesTaint({ key: "k", operator: "Exists", effect: "NoExecute" }, taint), false);
  assert.equal(toleratesTaint({ value: "v" }, taint), false);
});
