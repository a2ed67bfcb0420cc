import { test } from "node:test";
import assert from "node:assert/strict";
import { makePod } from "../testing/objects.js";
import { SchedulingQueue, type QueueName } from "./scheduling-queue.js";

function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function recorder() {
  const pending: Record<string, number> = {};
  const incoming: string[] = [];
  return { pending, incoming, metrics: { pending: (q: QueueName, n: number) => (pending[q] = n), incoming: (q: QueueName, e: string) => incoming.push(`${q}/${e}`) } };
}

const pod = (name: string, priority = 0, spec: Record<string, unknown> = {}) => makePod(name, { spec: { priority, ...spec } });

test("queue: activeQ pops by priority, then by arrival", () => {
  const clock = fakeClock();
  const q = new SchedulingQueue({ clock });
  q.add(pod("low-1"));
  clock.advance(1);
  q.add(pod("high", 100));
  clock.advance(1);
  q.add(pod("low-2"));
  assert.deepEqual([q.popNow()?.key, q.popNow()?.key, q.popNow()?.key, q.popNow()], ["default/high", "default/low-1", "default/low-2", undefined]);
});

test("queue: backoff doubles from 1 s to at most 10 s, and BackoffComplete moves the pod back", () => {
  const clock = fakeClock();
  const r = recorder();
  const q = new SchedulingQueue({ clock, metrics: r.metrics });
  q.add(pod("p"));
  const durations: number[] = [];
  for (let i = 0; i < 6; i++) {
    const item = q.popNow()!;
    durations.push(q.backoffDurationMs(item));
    q.addBackoff(item);
    assert.equal(q.where("default/p"), "backoff");
    clock.advance(q.backoffDurationMs(item) - 1);
    q.flushBackoffCompleted();
    assert.equal(q.where("default/p"), "backoff", "still backing off 1 ms before expiry");
    clock.advance(1);
    q.flushBackoffCompleted();
    assert.equal(q.where("default/p"), "active");
  }
  assert.deepEqual(durations, [1000, 2000, 4000, 8000, 10000, 10000]);
  assert.ok(r.incoming.includes("backoff/ScheduleAttemptFailure"));
  assert.ok(r.incoming.includes("active/BackoffComplete"));
});

test("queue: unschedulable pods move on events that concern the plugins that rejected them, else after 5 minutes", () => {
  const clock = fakeClock();
  const r = recorder();
  const plugins: Record<string, string[]> = { NodeAdd: ["NodeAffinity", "NodeResourcesFit"], AssignedPodDelete: ["NodeResourcesFit"] };
  const q = new SchedulingQueue({ clock, metrics: r.metrics, pluginsFor: (e) => new Set(plugins[e] ?? []) });
  q.add(pod("selector"));
  q.add(pod("cpu"));
  const a = q.popNow()!;
  const b = q.popNow()!;
  a.unschedulablePlugins = new Set(["NodeAffinity"]);
  b.unschedulablePlugins = new Set(["NodeResourcesFit"]);
  q.addUnschedulable(a, q.schedulingCycle);
  q.addUnschedulable(b, q.schedulingCycle);
  assert.deepEqual(r.pending, { active: 0, backoff: 0, unschedulable: 2, gated: 0 });
  clock.advance(5000); // past the first backoff
  q.moveOnEvent("AssignedPodDelete");
  assert.equal(q.where("default/cpu"), "active");
  assert.equal(q.where("default/selector"), "unschedulable");
  assert.ok(r.incoming.includes("active/AssignedPodDelete"));
  clock.advance(5 * 60_000 - 5001);
  q.flushUnschedulableLeftover();
  assert.equal(q.where("default/selector"), "unschedulable");
  clock.advance(1);
  q.flushUnschedulableLeftover();
  assert.equal(q.where("default/selector"), "active");
  assert.ok(r.incoming.includes("active/UnschedulableTimeout"));
});

test("queue: a pod failing in a cycle that saw a move request goes to backoff, not unschedulable (it may have missed the event)", () => {
  const q = new SchedulingQueue({ clock: fakeClock() });
  q.add(pod("p"));
  const item = q.popNow()!;
  const cycle = q.schedulingCycle;
  q.moveOnEvent("NodeAdd");
  q.addUnschedulable(item, cycle);
  assert.equal(q.where("default/p"), "backoff");
});

test("queue: gated pods wait outside activeQ until their schedulingGates are gone", () => {
  const r = recorder();
  const q = new SchedulingQueue({ clock: fakeClock(), metrics: r.metrics });
  q.add(pod("gated", 0, { schedulingGates: [{ name: "example.com/wait" }] }));
  assert.equal(q.where("default/gated"), "gated");
  assert.deepEqual(r.pending, { active: 0, backoff: 0, unschedulable: 0, gated: 1 });
  q.moveOnEvent("NodeAdd");
  assert.equal(q.where("default/gated"), "gated", "cluster events do not ungate");
  q.update(pod("gated", 0, { schedulingGates: [] }));
  assert.equal(q.where("default/gated"), "active");
  assert.ok(r.incoming.includes("gated/PodAdd"));
  assert.ok(r.incoming.includes("active/PodUpdate"));
});

test("queue: pop waits for a pod and returns undefined once the signal fires", async () => {
  const q = new SchedulingQueue({ clock: fakeClock() });
  const abort = new AbortController();
  const waiting = q.pop(abort.signal);
  q.add(pod("late"));
  assert.equal((await waiting)?.key, "default/late");
  const none = q.pop(abort.signal);
  abort.abort();
  assert.equal(await none, undefined);
  q.delete("default/late");
  assert.equal(q.where("default/late"), undefined);
});
