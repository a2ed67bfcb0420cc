import { test } from "node:test";
import assert from "node:assert/strict";
import { Diagnosis, fitErrorMessage } from "./fit-error.js";
import { unresolvable, unschedulable } from "./interface.js";

test("fit error: upstream's message — counts per reason, sorted as strings, then the preemption message", () => {
  const d = new Diagnosis();
  d.record("n1", unresolvable("NodeAffinity", "node(s) didn't match Pod's node affinity/selector"));
  d.record("n2", unschedulable("NodeResourcesFit", "Insufficient cpu", "Insufficient memory"));
  d.record("n3", unschedulable("NodeResourcesFit", "Insufficient cpu"));
  assert.equal(fitErrorMessage(3, d), "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu.");
  d.postFilterMessage = "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.";
  assert.equal(
    fitErrorMessage(3, d),
    "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..",
  );
  assert.deepEqual([...d.unschedulablePlugins].sort(), ["NodeAffinity", "NodeResourcesFit"]);
});
