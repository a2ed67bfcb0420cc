// The client's metrics with a real registry: a work queue's adds, depth,
// retries and durations, and the in-progress gauges read at scrape time.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MetricsRegistry } from "../component/metrics/index.js";
import { assertExposesMetric, parseExposition } from "../component/metrics/testing.js";
import { WorkQueue } from "./workqueue.js";

function value(text: string, sample: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

test("a work queue reports the workqueue_* family under its name", async () => {
  const registry = new MetricsRegistry();
  const q = new WorkQueue({ name: "widgets", metrics: registry });
  q.add("a");
  q.add("a"); // deduplicated: not an add
  q.add("b");
  let text = registry.expose();
  assert.equal(value(text, 'workqueue_adds_total{name="widgets"}'), 2);
  assert.equal(value(text, 'workqueue_depth{name="widgets"}'), 2);

  const key = await q.get();
  assert.equal(key, "a");
  text = registry.expose();
  assert.equal(value(text, 'workqueue_depth{name="widgets"}'), 1);
  assert.equal(value(text, 'workqueue_queue_duration_seconds_count{name="widgets"}'), 1);
  assert.ok((value(text, 'workqueue_unfinished_work_seconds{name="widgets"}') ?? -1) >= 0);
  assert.ok((value(text, 'workqueue_longest_running_processor_seconds{name="widgets"}') ?? -1) >= 0);

  q.addRateLimited("a");
  q.done("a");
  text = registry.expose();
  assert.equal(value(text, 'workqueue_retries_total{name="widgets"}'), 1);
  assert.equal(value(text, 'workqueue_work_duration_seconds_count{name="widgets"}'), 1);
  assert.equal(value(text, 'workqueue_unfinished_work_seconds{name="widgets"}'), 0, "nothing in process");

  const families = parseExposition(text);
  for (const [name, kind] of [
    ["workqueue_adds_total", "counter"], ["workqueue_depth", "gauge"], ["workqueue_longest_running_processor_seconds", "gauge"],
    ["workqueue_queue_duration_seconds", "histogram"], ["workqueue_retries_total", "counter"],
    ["workqueue_unfinished_work_seconds", "gauge"], ["workqueue_work_duration_seconds", "histogram"],
  ] as const) assertExposesMetric(families, { name, kind, labels: ["name"] });
  assert.match(text, /# HELP workqueue_depth \[BETA\] /);

  // Two queues share the families, one series each.
  const other = new WorkQueue({ name: "gadgets", metrics: registry });
  other.add("x");
  text = registry.expose();
  assert.equal(value(text, 'workqueue_depth{name="gadgets"}'), 1);
  assert.equal(value(text, 'workqueue_depth{name="widgets"}'), 1);
  q.shutDown();
  other.shutDown();
  assert.equal(value(registry.expose(), 'workqueue_depth{name="gadgets"}'), 0);
});

test("a queue without a registry records nothing and costs nothing", () => {
  const q = new WorkQueue({ name: "plain" });
  q.add("a");
  q.instrument(undefined);
  assert.equal(q.length, 1);
  q.shutDown();
});

test("a queue instrumented late counts the keys already waiting: the depth never goes below zero", async () => {
  const registry = new MetricsRegistry();
  const q = new WorkQueue({ name: "late" });
  q.add("a");
  q.add("b");
  q.instrument(registry);
  assert.equal(value(registry.expose(), 'workqueue_depth{name="late"}'), 2);
  q.done((await q.get())!);
  q.done((await q.get())!);
  const text = registry.expose();
  assert.equal(value(text, 'workqueue_depth{name="late"}'), 0);
  assert.equal(value(text, 'workqueue_queue_duration_seconds_count{name="late"}'), 2);
  q.shutDown();
});
