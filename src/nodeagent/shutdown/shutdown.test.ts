import { test } from "node:test";
import assert from "node:assert/strict";
import { Shutdown } from "./shutdown.js";

test("shutdown: steps run last first, once however often stop is asked; a failing or hanging step does not stop the others", async () => {
  const ran: string[] = [];
  const logs: string[] = [];
  const shutdown = new Shutdown({ log: (l) => logs.push(l), stepLimitMs: 50 });
  shutdown.defer(() => void ran.push("first"));
  shutdown.defer(() => new Promise<void>(() => ran.push("hangs")));
  shutdown.defer(() => {
    ran.push("throws");
    throw new Error("boom");
  });
  shutdown.defer(async () => void ran.push("last"));
  await Promise.all([shutdown.stop(), shutdown.stop()]);
  assert.deepStrictEqual(ran, ["last", "throws", "hangs", "first"]);
  assert.deepStrictEqual(logs, ["nodeagent: stopping: boom", "nodeagent: stopping: a cleanup step took over 0.05 s; going on"]);
  assert.equal(shutdown.signal.aborted, true);
});

test("shutdown: armed, the embedder's signal stops the agent and done settles without a reason", async () => {
  const shutdown = new Shutdown({ log: () => {} });
  const embedder = new AbortController();
  let stopped = false;
  shutdown.defer(() => void (stopped = true));
  const done = shutdown.arm(embedder.signal);
  embedder.abort();
  assert.equal(await done, undefined);
  assert.equal(stopped, true);
});

test("shutdown: an agent ending on its own says why (the first reason), and done settles with it", async () => {
  const shutdown = new Shutdown({ log: () => {} });
  const done = shutdown.arm(undefined);
  shutdown.end("another agent asked for the lock file");
  shutdown.end("a later reason");
  assert.equal(await done, "another agent asked for the lock file");
  assert.equal(shutdown.endedBecause, "another agent asked for the lock file");
});
