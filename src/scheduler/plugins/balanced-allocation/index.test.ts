import { test } from "node:test";
import assert from "node:assert/strict";
import { PodInfo } from "../../framework/pod-info.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo } from "../../testing/cluster.js";
import { balancedAllocation } from "./index.js";

test("BalancedAllocation: prefers the node where cpu and memory end up used in the same proportion", () => {
  const cpuHeavy = nodeInfo(makeNode("cpu-heavy", { cpu: "4", memory: "4Gi" }), [makePod("a", { cpu: "3", memory: "0" })]);
  const even = nodeInfo(makeNode("even", { cpu: "4", memory: "4Gi" }), [makePod("b", { cpu: "1", memory: "1Gi" })]);
  const pod = new PodInfo(makePod("p", { cpu: "1", memory: "1Gi" }));
  assert.equal(balancedAllocation.score(new Map(), pod, even), 100);
  // cpu 4/4, memory 1/4: std = |1 − 0.25| / 2.
  assert.equal(balancedAllocation.score(new Map(), pod, cpuHeavy), (1 - 0.375) * 100);
});
