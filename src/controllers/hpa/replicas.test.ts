import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultScaleDown, defaultScaleUp } from "../../api/autoscaling/index.js";
import { MetricError, normalize, resourceReplicas, scaleDownLimit, scaleUpLimit, type PodSample } from "./replicas.js";

const pod = (name: string, usage: number | undefined, request = 1, ready = true): PodSample => ({ name, request, ready, ...(usage !== undefined ? { usage } : {}) });

test("utilization: ceil(ratio × pods); within the 0.1 tolerance nothing changes", () => {
  assert.deepEqual(resourceReplicas([pod("a", 1), pod("b", 1)], { utilization: 50 }, 2, "cpu"), { replicas: 4, utilization: 100, averageValue: 1 });
  assert.equal(resourceReplicas([pod("a", 0.54), pod("b", 0.5)], { utilization: 50 }, 2, "cpu").replicas, 2, "ratio 1.04");
  assert.equal(resourceReplicas([pod("a", 0.1), pod("b", 0.1), pod("c", 0.1)], { utilization: 50 }, 3, "cpu").replicas, 1);
});

test("average value: the pods' average against the target", () => {
  const p = resourceReplicas([pod("a", 300e6, 0), pod("b", 100e6, 0)], { averageValue: 100e6 }, 2, "memory");
  assert.deepEqual([p.replicas, p.averageValue, p.utilization], [4, 200e6, undefined]);
});

test("missing metrics count as the full request scaling down, nothing scaling up; unready cpu pods as nothing scaling up", () => {
  // Up: 2 pods at 100% of request, one without metrics (0): ratio (2/3)/0.5 = 1.33 → ceil(1.33 × 3) = 4.
  assert.equal(resourceReplicas([pod("a", 1), pod("b", 1), pod("c", undefined)], { utilization: 50 }, 3, "cpu").replicas, 4);
  // Down: one pod at 10%, one missing (100%): 55% against 50% is within tolerance → unchanged.
  assert.equal(resourceReplicas([pod("a", 0.1), pod("b", undefined)], { utilization: 50 }, 2, "cpu").replicas, 2);
  // An unready pod's usage is ignored when scaling up on cpu.
  assert.equal(resourceReplicas([pod("a", 1), pod("b", 5, 1, false)], { utilization: 50 }, 2, "cpu").replicas, 2);
});

test("errors: no pods, no metrics, a pod without a request", () => {
  assert.throws(() => resourceReplicas([], { utilization: 50 }, 1, "cpu"), MetricError);
  assert.throws(() => resourceReplicas([pod("a", undefined)], { utilization: 50 }, 1, "cpu"), /no metrics returned from resource metrics API/);
  assert.throws(() => resourceReplicas([pod("a", 1, 0)], { utilization: 50 }, 1, "cpu"), /missing request for cpu/);
});

test("behavior: default scale-up limit max(4 pods, 100%) per 15 s; scale-down stabilized over the window", () => {
  const up = defaultScaleUp();
  const down = defaultScaleDown();
  assert.equal(scaleUpLimit(1, [], up, 0), 5);
  assert.equal(scaleUpLimit(10, [], up, 0), 20);
  assert.equal(scaleUpLimit(5, [{ at: -5000, change: 4 }], up, 0), 5, "4 pods were added 5 s ago: the period started at 1");
  assert.equal(scaleDownLimit(10, [], down, 0), 0);
  const base = { now: 600_000, min: 1, max: 10, scaleUp: up, scaleDown: down, upEvents: [], downEvents: [] };
  assert.deepEqual(normalize({ ...base, current: 2, desired: 20, recommendations: [] }), { replicas: 6, stabilized: 20, limited: { reason: "ScaleUpLimit", message: "the desired replica count is increasing faster than the maximum scale rate" } });
  assert.deepEqual(normalize({ ...base, current: 8, desired: 20, recommendations: [] }).limited?.reason, "TooManyReplicas");
  // A higher recommendation 100 s ago holds a scale-down (window 300 s); one 400 s ago does not.
  assert.equal(normalize({ ...base, current: 5, desired: 2, recommendations: [{ at: 500_000, replicas: 5 }] }).replicas, 5);
  assert.equal(normalize({ ...base, current: 5, desired: 2, recommendations: [{ at: 200_000, replicas: 5 }] }).replicas, 2);
  assert.equal(normalize({ ...base, current: 5, desired: 2, scaleDown: { ...down, selectPolicy: "Disabled" }, recommendations: [] }).replicas, 5);
  assert.deepEqual(normalize({ ...base, current: 3, desired: 0, scaleDown: { ...down, stabilizationWindowSeconds: 0 }, recommendations: [] }), { replicas: 1, stabilized: 0, limited: { reason: "TooFewReplicas", message: "the desired replica count is less than the minimum replica count" } });
});
