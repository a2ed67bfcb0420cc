// Leader election against a real API server serving coordination leases:
// two candidates, one leader; failover once the holder stops renewing; a
// release on stop hands over at once.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { LeaderElector, leaseResource, type Lease } from "./leader-election.js";
import type { RestClient } from "./rest.js";
import { serveBuiltinApi } from "./testing/test-server.js";

async function until(what: string, check: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe("LeaderElector", () => {
  let client: RestClient;
  serveBuiltinApi((c) => (client = c));

  function candidate(name: string, lease: string, extra: { releaseOnCancel?: boolean; leaseDurationMs?: number } = {}) {
    const state = { leading: false, started: 0, stopped: 0, leaders: [] as string[] };
    const stop = new AbortController();
    const elector = new LeaderElector({
      client,
      identity: name,
      lease: { namespace: "orch-system", name: lease },
      leaseDurationMs: 1000,
      renewDeadlineMs: 700,
      retryPeriodMs: 100,
      ...extra,
      onStartedLeading: (signal) => {
        state.leading = true;
        state.started++;
        signal.addEventListener("abort", () => (state.leading = false));
      },
      onStoppedLeading: () => state.stopped++,
      onNewLeader: (id) => state.leaders.push(id),
    });
    const running = elector.run(stop.signal);
    return { elector, state, stop, running };
  }

  test("two candidates: one leads; when it stops renewing the other takes over", async () => {
    const a = candidate("a", "failover", { releaseOnCancel: false });
    await until("a leads", () => a.state.leading);
    const b = candidate("b", "failover");
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(b.state.leading, false, "b waits while a renews");
    assert.equal(b.elector.leader, "a");

    const lease = await client.get<Lease>(leaseResource(), { namespace: "orch-system", name: "failover" });
    assert.equal(lease.apiVersion, "coordination.orch.io/v1");
    assert.equal(lease.spec?.holderIdentity, "a");
    assert.equal(lease.spec?.leaseDurationSeconds, 1);
    assert.match(lease.spec?.renewTime ?? "", MICRO_TIME);
    assert.match(lease.spec?.acquireTime ?? "", MICRO_TIME);
    assert.equal(lease.spec?.leaseTransitions, 0);

    // a stops without releasing: b must wait out the lease duration, then take over.
    const stoppedAt = Date.now();
    a.stop.abort();
    await a.running;
    assert.equal(a.state.stopped, 1);
    await until("b leads", () => b.state.leading);
    assert.ok(Date.now() - stoppedAt >= 500, "b waited for the lease to expire");
    const taken = await client.get<Lease>(leaseResource(), { namespace: "orch-system", name: "failover" });
    assert.equal(taken.spec?.holderIdentity, "b");
    assert.equal(taken.spec?.leaseTransitions, 1);
    assert.deepEqual(b.state.leaders, ["a", "b"]);
    b.stop.abort();
    await b.running;
  });

  test("releasing on stop lets the next candidate lead at once; a lost lease stops leading", async () => {
    // A 10 s lease, so "at once" (under 5 s: once seen at 2.5 s on a loaded CI machine) and "after the
    // lease ran out" (10 s) stay apart on a loaded machine.
    const a = candidate("a", "release", { leaseDurationMs: 10_000 });
    await until("a leads", () => a.state.leading);
    const b = candidate("b", "release", { leaseDurationMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    a.stop.abort();
    await a.running;
    const released = Date.now();
    await until("b leads", () => b.state.leading);
    assert.ok(Date.now() - released < 5000, "no need to wait out the lease");

    // Someone else overwrites the lease: b cannot renew it and stops leading within its renew deadline.
    const lease = await client.get<Lease>(leaseResource(), { namespace: "orch-system", name: "release" });
    await client.update(leaseResource(), { ...lease, spec: { ...lease.spec, holderIdentity: "intruder", leaseDurationSeconds: 30 } });
    await b.running;
    assert.equal(b.state.leading, false);
    assert.equal(b.state.stopped, 1);
    assert.equal(b.elector.isLeader(), false);
  });
});
