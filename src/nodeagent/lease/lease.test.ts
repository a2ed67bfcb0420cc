import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiError, buildStatus } from "../../machinery/index.js";
import type { Lease } from "../../api/coordination/types.js";
import { FakeClock } from "../clock/clock.js";
import { NodeLease, type LeaseApi } from "./lease.js";

/** A lease API that fails its first `failures` calls with a 500, then keeps one lease in memory. */
function flakyApi(failures: number): LeaseApi & { stored?: Lease; calls: string[] } {
  const api = {
    calls: [] as string[],
    stored: undefined as Lease | undefined,
    fail(call: string) {
      api.calls.push(call);
      if (failures-- > 0) throw new ApiError(buildStatus({ code: 500, reason: "InternalError", message: "etcd is down" }));
    },
    async get(_ns: string, name: string) {
      api.fail("get");
      if (!api.stored) throw new ApiError(buildStatus({ code: 404, reason: "NotFound", message: `leases "${name}" not found` }));
      return structuredClone(api.stored);
    },
    async create(lease: Lease) {
      api.fail("create");
      api.stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: "1" } };
      return structuredClone(api.stored);
    },
    async update(lease: Lease) {
      api.fail("update");
      api.stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(Number(lease.metadata.resourceVersion) + 1) } };
      return structuredClone(api.stored);
    },
  };
  return api;
}

test("node lease: retries back off from 200 ms, doubling, capped at 7 s, then renew every 10 s", async () => {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const api = flakyApi(8);
  const lease = new NodeLease({ api, nodeName: "n1", namespace: "orch-node-lease", leaseDurationSeconds: 40, apiVersion: "coordination.orch.io/v1", clock });
  const stop = new AbortController();
  const running = lease.run(stop.signal);
  // Each failed attempt sleeps; move the clock past every sleep until the renew interval comes up.
  while (clock.sleeps.at(-1) !== 10_000) {
    await clock.waitForSleeper();
    clock.advance(clock.sleeps.at(-1)!);
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(clock.sleeps, [200, 400, 800, 1600, 3200, 6400, 7000, 7000, 10_000]);
  assert.equal(api.stored?.spec?.holderIdentity, "n1");
  assert.equal(api.stored?.spec?.leaseDurationSeconds, 40);
  const firstRenew = api.stored?.spec?.renewTime;
  assert.match(firstRenew!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  // The next heartbeat is an update of the lease we hold, with a later renew time.
  clock.advance(10_000);
  await clock.waitForSleeper();
  while (api.calls.at(-1) !== "update") await new Promise((r) => setImmediate(r));
  assert.ok(Date.parse(api.stored!.spec!.renewTime!) > Date.parse(firstRenew!));
  stop.abort();
  await running;
});

test("node lease: renewed every quarter of its duration, so a shorter lease is renewed sooner", async () => {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const api = flakyApi(0);
  const lease = new NodeLease({ api, nodeName: "n1", namespace: "orch-node-lease", leaseDurationSeconds: 8, apiVersion: "coordination.orch.io/v1", clock });
  const stop = new AbortController();
  const running = lease.run(stop.signal);
  await clock.waitForSleeper();
  assert.deepEqual(clock.sleeps, [2000]);
  stop.abort();
  await running;
});

test("node lease: an existing lease (agent restart) is taken over and renewed", async () => {
  const clock = new FakeClock(1_000_000);
  const api = flakyApi(0);
  api.stored = { apiVersion: "coordination.orch.io/v1", kind: "Lease", metadata: { name: "n1", namespace: "orch-node-lease", resourceVersion: "7" }, spec: { holderIdentity: "n1", renewTime: "2020-01-01T00:00:00.000000Z" } };
  const lease = new NodeLease({ api, nodeName: "n1", namespace: "orch-node-lease", leaseDurationSeconds: 40, apiVersion: "coordination.orch.io/v1", clock, nodeUid: () => "uid-1" });
  await lease.sync(new AbortController().signal);
  assert.deepEqual(api.calls, ["get", "update"]);
  assert.equal(api.stored?.spec?.renewTime, "1970-01-01T00:16:40.000000Z");
  assert.deepEqual(api.stored?.metadata.ownerReferences, [{ apiVersion: "v1", kind: "Node", name: "n1", uid: "uid-1" }]);
});
