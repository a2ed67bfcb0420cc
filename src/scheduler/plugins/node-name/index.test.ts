import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../../machinery/naming.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { nodeName } from "./index.js";
import { nodeUnschedulable } from "../node-unschedulable/index.js";

test("NodeName: a pod naming its node fits only there", () => {
  const nodes = [nodeInfo(makeNode("a")), nodeInfo(makeNode("b"))];
  assert.deepEqual(reasons(nodeName, makePod("p", { spec: { nodeName: "b" } }), nodes), {
    a: "UnschedulableAndUnresolvable: node(s) didn't match the requested node name",
    b: "fits",
  });
  assert.deepEqual(reasons(nodeName, makePod("p"), nodes), { a: "fits", b: "fits" });
});

test("NodeUnschedulable: cordoned nodes refuse pods unless they tolerate node.orch.io/unschedulable:NoSchedule", () => {
  const plugin = nodeUnschedulable(namingFor());
  const nodes = [nodeInfo(makeNode("cordoned", { unschedulable: true })), nodeInfo(makeNode("open"))];
  assert.deepEqual(reasons(plugin, makePod("p"), nodes), { cordoned: "UnschedulableAndUnresolvable: node(s) were unschedulable", open: "fits" });
  const tolerant = makePod("t", { spec: { tolerations: [{ key: "node.orch.io/unschedulable", operator: "Exists", effect: "NoSchedule" }] } });
  assert.deepEqual(reasons(plugin, tolerant, nodes), { cordoned: "fits", open: "fits" });
});
