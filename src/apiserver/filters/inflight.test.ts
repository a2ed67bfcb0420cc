// The in-flight limit on a real server: requests held in the handler fill the
// slots (a read waiting for a future resource version, a create held by an
// admission plugin); the next one of the same kind is answered 429 with
// Retry-After: 1 at once, while watches and the other kind pass.

import { test } from "node:test";
import assert from "node:assert/strict";
import { startTestServer, type TestResponse } from "../testing/harness.js";
import { sampleApi } from "../testing/sample-api.js";
import { holdingAdmission, SLOW_READ, widget, WIDGETS } from "../testing/held-requests.js";
import { sleep } from "../../machinery/until.js";
import { observationsAbove, parseExposition } from "../../component/metrics/testing.js";
import { coordinationModule } from "../../api/coordination/index.js";
import { namingFor } from "../../machinery/naming.js";


function assertTooMany(r: TestResponse, what: string): void {
  assert.equal(r.status, 429, `${what}: ${r.text}`);
  assert.equal(r.headers["retry-after"], "1", what);
  assert.equal(r.json.kind, "Status");
  assert.equal(r.json.reason, "TooManyRequests");
  assert.equal(r.json.message, "Too many requests, please try again later.");
}

test("over --max-requests-inflight a read is 429 with Retry-After: 1; writes are counted apart; watches are not counted", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi], admission: hold.admission, limits: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 } });
  try {
    // Two watches first: long-running, they take no slot.
    const w1 = await t.watch(`${WIDGETS}?watch=1`);
    const w2 = await t.watch(`${WIDGETS}?watch=1`);
    assert.equal(w1.status, 200);
    assert.equal(w2.status, 200);
    const slowReads = [t.request("GET", SLOW_READ), t.request("GET", SLOW_READ)];
    await sleep(500);
    const started = Date.now();
    assertTooMany(await t.request("GET", WIDGETS), "third read");
    assert.ok(Date.now() - started < 1000, "refused at once, not queued");
    assertTooMany(await t.request("GET", `${WIDGETS}/a`), "a get");
    // Writes have their own slots: one passes while the reads are full.
    assert.equal((await t.request("POST", WIDGETS, { body: widget("fast") })).status, 201);
    // The watches still work, and a watch opened now is not refused.
    assert.equal((await w1.next(1))[0].object.metadata.name, "fast");
    const w3 = await t.watch(`${WIDGETS}?watch=1&resourceVersion=0`);
    assert.equal(w3.status, 200);
    w3.close();
    // One write held in admission fills the one mutating slot.
    const slowCreate = t.request("POST", WIDGETS, { body: widget("slow-1") });
    await sleep(300);
    assertTooMany(await t.request("POST", WIDGETS, { body: widget("other") }), "second write");
    assertTooMany(await t.request("DELETE", `${WIDGETS}/fast`), "a delete");
    hold.release();
    assert.equal((await slowCreate).status, 201);
    for (const r of await Promise.all(slowReads)) assert.equal(r.status, 504, "the held reads ended as they would have");
    // Slots are given back.
    assert.equal((await t.request("GET", WIDGETS)).status, 200);
    assert.equal((await t.request("POST", WIDGETS, { body: widget("other") })).status, 201);
    w1.close();
    w2.close();
  } finally {
    hold.release();
    await t.close();
  }
});

test("0 turns a limit off", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi], admission: hold.admission, limits: { maxRequestsInflight: 0, maxMutatingRequestsInflight: 0 } });
  try {
    const held = [1, 2, 3].map((i) => t.request("POST", WIDGETS, { body: widget(`slow-${i}`) }));
    const reads = [1, 2, 3].map(() => t.request("GET", SLOW_READ));
    await sleep(300);
    assert.equal((await t.request("GET", WIDGETS)).status, 200);
    assert.equal((await t.request("POST", WIDGETS, { body: widget("fast") })).status, 201);
    hold.release();
    for (const r of await Promise.all(held)) assert.equal(r.status, 201);
    for (const r of await Promise.all(reads)) assert.equal(r.status, 504);
  } finally {
    hold.release();
    await t.close();
  }
});

test("apiserver_current_inflight_requests counts what the limit counts: not watches", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi], admission: hold.admission });
  const gauge = async (kind: string) => {
    const r = await t.request("GET", "/metrics");
    const families = parseExposition(r.text);
    return families.get("apiserver_current_inflight_requests")!.samples.find((s) => s.labels["request_kind"] === kind)!.value;
  };
  try {
    const w = await t.watch(`${WIDGETS}?watch=1`);
    assert.equal(await gauge("readOnly"), 1, "the scrape itself, not the watch");
    assert.equal(await gauge("mutating"), 0);
    const read = t.request("GET", SLOW_READ);
    const create = t.request("POST", WIDGETS, { body: widget("slow-1") });
    await sleep(300);
    assert.equal(await gauge("readOnly"), 2);
    assert.equal(await gauge("mutating"), 1);
    hold.release();
    await Promise.all([read, create]);
    w.close();
  } finally {
    hold.release();
    await t.close();
  }
});

test("with a queue wait, a request over the limit waits for a slot first come first served; with the queue full it is 429 at once; the wait is timed apart from the SLI", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi], admission: hold.admission, limits: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, inflightQueueWaitMs: 5000 } });
  try {
    // One write held in admission fills the one mutating slot (over 1 s: it runs, it is not queued).
    const held = t.request("POST", WIDGETS, { body: widget("slow-held") });
    await sleep(300);
    // The next waits in the queue (the limit, 1, is also the queue's length); a third finds the queue full.
    const queued = t.request("POST", WIDGETS, { body: widget("queued") });
    await sleep(800);
    const started = Date.now();
    assertTooMany(await t.request("POST", WIDGETS, { body: widget("full") }), "the queue is full");
    assert.ok(Date.now() - started < 1000, "a full queue refuses at once");
    hold.release();
    assert.equal((await held).status, 201);
    assert.equal((await queued).status, 201, "the queued write got the slot when it was given back");
    assert.equal((await t.request("POST", WIDGETS, { body: widget("after") })).status, 201, "the slot is free again");
    // The waits in apiserver_flowcontrol_request_wait_duration_seconds; apiserver_request_sli_duration_seconds leaves them out.
    const families = parseExposition((await t.request("GET", "/metrics")).text);
    const work = { flow_schema: "global-default", priority_level: "global-default" };
    const WAIT = "apiserver_flowcontrol_request_wait_duration_seconds";
    assert.equal(observationsAbove(families, WAIT, { ...work, execute: "true" }, "0.5"), 1, "the queued write waited over 0.5 s, and ran");
    assert.equal(observationsAbove(families, WAIT, { ...work, execute: "false" }, "0.005"), 0, "the refused one did not wait");
    assert.equal(families.get(WAIT)!.samples.find((s) => s.name === `${WAIT}_count` && s.labels["execute"] === "false")?.value, 1);
    const posts = { verb: "POST", resource: "widgets" };
    assert.equal(observationsAbove(families, "apiserver_request_duration_seconds", posts, "0.6"), 2, "both slow writes in the duration");
    assert.equal(observationsAbove(families, "apiserver_request_sli_duration_seconds", posts, "0.6"), 1, "only the held one in the SLI: the queued one's wait is left out");
  } finally {
    hold.release();
    await t.close();
  }
});

test("a queued request whose wait runs out is 429, and leaves the queue", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi], admission: hold.admission, limits: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, inflightQueueWaitMs: 400 } });
  try {
    const held = t.request("POST", WIDGETS, { body: widget("slow-held") });
    await sleep(300);
    const from = Date.now();
    assertTooMany(await t.request("POST", WIDGETS, { body: widget("late") }), "the wait ran out");
    const waited = Date.now() - from;
    assert.ok(waited >= 350 && waited < 1500, `refused after its wait (${waited} ms)`);
    // It left the queue: the next one may queue again, and gets the slot once it is given back.
    const next = t.request("POST", WIDGETS, { body: widget("next") });
    await sleep(100);
    hold.release();
    assert.equal((await held).status, 201);
    assert.equal((await next).status, 201);
  } finally {
    hold.release();
    await t.close();
  }
});

test("leases have their own lane: renewals pass while pod-like writes fill the limit, and a full lease lane does not hold other writes", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi, coordinationModule], admission: hold.admission, limits: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 } });
  const leases = `/apis/${namingFor().coordinationGroup}/v1/namespaces/default/leases`;
  const lease = (name: string) => ({ apiVersion: `${namingFor().coordinationGroup}/v1`, kind: "Lease", metadata: { name }, spec: { holderIdentity: "a", leaseDurationSeconds: 15 } });
  try {
    // One widget write held in admission fills the mutating limit (1).
    const heldWidget = t.request("POST", WIDGETS, { body: widget("slow-w") });
    await sleep(300);
    assertTooMany(await t.request("POST", WIDGETS, { body: widget("other") }), "a second widget write");
    const created = await t.request("POST", leases, { body: lease("node-a") });
    assert.equal(created.status, 201, `a lease write passes in its lane: ${created.text}`);
    const renewed = await t.request("PUT", `${leases}/node-a`, { body: { ...created.json, spec: { ...created.json.spec, renewTime: "2026-11-29T13:00:00.000000Z" } } });
    assert.equal(renewed.status, 200, renewed.text);
    // The lane has a limit of its own (a tenth of 1, at least 1): a held lease write fills it.
    const heldLease = t.request("POST", leases, { body: lease("slow-l") });
    await sleep(300);
    assertTooMany(await t.request("POST", leases, { body: lease("node-b") }), "a second lease write while the lane is full");
    hold.release();
    assert.equal((await heldWidget).status, 201);
    assert.equal((await heldLease).status, 201);
    assert.equal((await t.request("POST", leases, { body: lease("node-b") })).status, 201, "the lane's slot is given back");
    assert.equal((await t.request("POST", WIDGETS, { body: widget("other") })).status, 201, "the other lane's slot is given back");
  } finally {
    hold.release();
    await t.close();
  }
});

test("nodes' heartbeat leases and the other leases (leader election) have lanes apart: a full node lane does not hold a leader's renewal", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi, coordinationModule], admission: hold.admission, limits: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 } });
  const group = namingFor().coordinationGroup;
  const leasesIn = (namespace: string) => `/apis/${group}/v1/namespaces/${namespace}/leases`;
  const lease = (name: string) => ({ apiVersion: `${group}/v1`, kind: "Lease", metadata: { name }, spec: { holderIdentity: "a", leaseDurationSeconds: 15 } });
  const nodeLeases = leasesIn(namingFor().nodeLeaseNamespace);
  try {
    // One node's heartbeat held in admission fills the node lane (a tenth of 1: one slot).
    const heldNode = t.request("POST", nodeLeases, { body: lease("slow-node") });
    await sleep(300);
    assertTooMany(await t.request("POST", nodeLeases, { body: lease("node-b") }), "a second node lease write while the node lane is full");
    const leader = await t.request("POST", leasesIn("default"), { body: lease("scheduler") });
    assert.equal(leader.status, 201, `a leader's lease passes in its own lane: ${leader.text}`);
    // And the other way: a held leader lease does not hold the nodes'.
    const heldLeader = t.request("POST", leasesIn("default"), { body: lease("slow-leader") });
    await sleep(300);
    assertTooMany(await t.request("POST", leasesIn("default"), { body: lease("controller-manager") }), "a second leader lease write while that lane is full");
    hold.release();
    assert.equal((await heldNode).status, 201);
    assert.equal((await heldLeader).status, 201);
    assert.equal((await t.request("POST", nodeLeases, { body: lease("node-b") })).status, 201, "the node lane's slot is given back");
  } finally {
    hold.release();
    await t.close();
  }
});
