import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import { activeDeadlineRemainingMs } from "./active-deadline.js";

const pod = (activeDeadlineSeconds?: number | null): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [], ...(activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds } : {}) } });
const start = "2026-01-01T00:00:00Z";
const at = (seconds: number) => Date.parse(start) + seconds * 1000;

test("the time left runs from status.startTime; zero or less once the deadline has passed", () => {
  assert.equal(activeDeadlineRemainingMs(pod(5), start, at(1)), 4_000);
  assert.equal(activeDeadlineRemainingMs(pod(5), start, at(5)), 0);
  assert.ok(activeDeadlineRemainingMs(pod(5), start, at(30))! < 0);
});

test("no deadline, or no start time yet: nothing to enforce", () => {
  assert.equal(activeDeadlineRemainingMs(pod(), start, at(100)), undefined);
  assert.equal(activeDeadlineRemainingMs(pod(null), start, at(100)), undefined);
  assert.equal(activeDeadlineRemainingMs(pod(5), undefined, at(100)), undefined);
  assert.equal(activeDeadlineRemainingMs(pod(5), "not a time", at(100)), undefined);
});
