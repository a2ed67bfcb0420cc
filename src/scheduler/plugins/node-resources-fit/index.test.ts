import { test } from "node:test";
import assert from "node:assert/strict";
import { PodInfo } from "../../framework/pod-info.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { nodeResourcesFit } from "./index.js";

test("NodeResourcesFit: requests against what is left of allocatable, extended resources and the pod count included", () => {
  const small = nodeInfo(makeNode("small", { cpu: "1", memory: "1Gi" }), [makePod("a", { cpu: "600m" })]);
  const big = nodeInfo(makeNode("big", { cpu: "8", memory: "16Gi", extended: { "example.com/gpu": "1" } }));
  const full = nodeInfo(makeNode("full", { pods: "1" }), [makePod("x")]);
  const nodes = [small, big, full];
  assert.deepEqual(reasons(nodeResourcesFit, makePod("p", { cpu: "500m" }), nodes), {
    small: "Unschedulable: Insufficient cpu",
    big: "fits",
    full: "Unschedulable: Too many pods",
  });
  assert.deepEqual(reasons(nodeResourcesFit, makePod("p", { cpu: "2", memory: "2Gi", requests: { "example.com/gpu": "2" } }), nodes), {
    small: "Unschedulable: Insufficient cpu; Insufficient memory; Insufficient example.com/gpu",
    big: "Unschedulable: Insufficient example.com/gpu",
    full: "Unschedulable: Too many pods; Insufficient example.com/gpu",
  });
  // Init containers count at their largest; the overhead adds on top.
  const init = makePod("init", { cpu: "100m" });
  init.spec!.initContainers = [{ name: "i", image: "x", resources: { requests: { cpu: "900m" } } }];
  init.spec!.overhead = { cpu: "50m" };
  assert.equal(new PodInfo(init).requests.get("cpu"), 950);
});

test("NodeResourcesFit score: LeastAllocated prefers the emptier node (non-zero defaults for pods without requests)", () => {
  const empty = nodeInfo(makeNode("empty", { cpu: "4", memory: "8Gi" }));
  const busy = nodeInfo(makeNode("busy", { cpu: "4", memory: "8Gi" }), [makePod("a", { cpu: "2", memory: "4Gi" })]);
  const pod = new PodInfo(makePod("p"));
  const state = new Map();
  const e = nodeResourcesFit.score(state, pod, empty);
  const b = nodeResourcesFit.score(state, pod, busy);
  assert.ok(e > b, `${e} > ${b}`);
  // 100m of 4 cpus and 200 MiB of 8 GiB left: ((3900/4000) + (1 - 200/8192)) / 2 × 100.
  assert.ok(Math.abs(e - ((3900 / 4000) * 100 + (1 - 200 / 8192) * 100) / 2) < 1e-9);
});
