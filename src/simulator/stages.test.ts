import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_STAGES, SUCCEED_AFTER_ANNOTATION, parseStages, stageWaitMs, succeedAfterMs } from "./stages.js";

test("stages: YAML and JSON of Go durations; absent stages keep their defaults", () => {
  const y = parseStages("podRunning: { delay: 1s, jitter: 500ms }\npodSucceeded: { delay: 2m }\n");
  assert.deepEqual(y.podRunning, { delayMs: 1000, jitterMs: 500 });
  assert.deepEqual(y.podSucceeded, { delayMs: 120_000, jitterMs: 0 });
  assert.deepEqual(y.podDelete, DEFAULT_STAGES.podDelete);
  const j = parseStages('{"podDelete": {"delay": "250ms"}}');
  assert.deepEqual(j.podDelete, { delayMs: 250, jitterMs: 0 });
  assert.equal(j.podSucceeded, undefined, "pods never succeed unless told");
  assert.deepEqual(parseStages(""), DEFAULT_STAGES);
});

test("stages: bad input is refused naming the stage and field", () => {
  assert.throws(() => parseStages("[1, 2]", "f.yaml"), /f\.yaml: must be a mapping/);
  assert.throws(() => parseStages("podRunning: 1s"), /podRunning: must be a mapping with delay and jitter/);
  assert.throws(() => parseStages("podRunning: { delay: 1s, after: 2s }"), /podRunning: unknown field "after"/);
  assert.throws(() => parseStages("podRunning: { delay: 5 }"), /podRunning\.delay: must be a duration string/);
  assert.throws(() => parseStages("podRunning: { delay: 5parsecs }"), /podRunning\.delay: unknown unit "parsecs"/);
  assert.throws(() => parseStages("podDelete: { jitter: -1s }"), /podDelete\.jitter: must not be negative/);
  assert.throws(() => parseStages("nodeReady: { delay: 1s }"), /unknown stage "nodeReady"/);
  assert.throws(() => parseStages("podRunning: {"), /not JSON or YAML/);
});

test("stages: the wait is delay plus a uniform share of jitter", () => {
  assert.equal(stageWaitMs({ delayMs: 1000, jitterMs: 500 }, () => 0), 1000);
  assert.equal(stageWaitMs({ delayMs: 1000, jitterMs: 500 }, () => 0.5), 1250);
  assert.equal(stageWaitMs({ delayMs: 0, jitterMs: 0 }, () => 0.9), 0);
});

test("stages: a pod's own succeed-after annotation, when it is a valid duration", () => {
  assert.equal(succeedAfterMs({ [SUCCEED_AFTER_ANNOTATION]: "30s" }), 30_000);
  assert.equal(succeedAfterMs({ [SUCCEED_AFTER_ANNOTATION]: "soon" }), undefined);
  assert.equal(succeedAfterMs({ [SUCCEED_AFTER_ANNOTATION]: "-1s" }), undefined);
  assert.equal(succeedAfterMs(undefined), undefined);
});
