import { test } from "node:test";
import assert from "node:assert/strict";
import type { PodStatus } from "../../api/core/types.js";
import { containerIdForLogs } from "./container-logs.js";

const status = (s: Record<string, unknown>): PodStatus => ({ containerStatuses: [{ name: "c", ...s }] });
const pick = (st: PodStatus, previous = false) => {
  try {
    return containerIdForLogs(st, "p", "c", previous);
  } catch (err) {
    return (err as Error).message;
  }
};

test("containerIdForLogs: the running instance; the terminated one; the last one while waiting to restart", () => {
  assert.equal(pick(status({ containerID: "x://2", state: { running: {} } })), "x://2");
  assert.equal(pick(status({ containerID: "x://2", state: { terminated: { containerID: "x://2" } } })), "x://2");
  assert.equal(pick(status({ state: { waiting: { reason: "CrashLoopBackOff" } }, lastState: { terminated: { containerID: "x://1" } } })), "x://1");
});

test("containerIdForLogs: previous is the last terminated instance, or upstream's error", () => {
  assert.equal(pick(status({ containerID: "x://2", state: { running: {} }, lastState: { terminated: { containerID: "x://1" } } }), true), "x://1");
  assert.equal(pick(status({ containerID: "x://2", state: { running: {} } }), true), 'previous terminated container "c" in pod "p" not found');
});

test("containerIdForLogs: upstream's messages for a container with no log yet", () => {
  assert.equal(pick(status({ state: { waiting: { reason: "ContainerCreating" } } })), 'container "c" in pod "p" is waiting to start: ContainerCreating');
  assert.equal(pick(status({ state: { waiting: { reason: "ErrImagePull" } } })), 'container "c" in pod "p" is waiting to start: image can\'t be pulled');
  assert.equal(pick(status({ state: { waiting: { reason: "ImagePullBackOff" } } })), 'container "c" in pod "p" is waiting to start: trying and failing to pull image');
  assert.equal(pick(status({ state: {} })), 'container "c" in pod "p" is waiting to start - no logs yet');
  assert.equal(pick({}), 'container "c" in pod "p" is not available');
  assert.equal(pick(status({ state: { terminated: { exitCode: 1 } } })), 'container "c" in pod "p" is terminated');
});
