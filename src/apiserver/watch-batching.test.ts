// A watcher that is behind gets its queued events in one write (http/respond.ts,
// sendWatch): each write to a response has a fixed cost, paid per event per
// watcher in a fan-out burst otherwise. Counted here on the responses' writes
// and uncorks, in the process the test server runs in; the events themselves (order,
// content) must be exactly those of an unbatched watch.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ServerResponse } from "node:http";
import { Http2ServerResponse } from "node:http2";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const GROUP = "samples.orch.io";
const W = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const COUNT = 40;

describe("a watcher's backlog goes out in one write", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi] });
  });
  after(async () => t.close());

  /**
   * What leaves a response for the connection, in events per flush: a write made while the response is not
   * corked goes out at once; writes made while it is corked go out together when it is uncorked.
   */
  function countWrites(): { writes: number[]; restore(): void } {
    const writes: number[] = [];
    const held = new WeakMap<object, number>();
    const protos = [ServerResponse.prototype, Http2ServerResponse.prototype] as unknown as Record<"write" | "uncork", (...a: unknown[]) => unknown>[];
    const originals = protos.map((p) => ({ write: p.write, uncork: p.uncork }));
    protos.forEach((proto, i) => {
      const original = originals[i]!;
      proto.write = function (this: { writableCorked: number }, chunk: unknown, ...rest: unknown[]) {
        const events = chunk instanceof Uint8Array ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString().split('"name":"batch-').length - 1 : 0;
        if (events > 0 && this.writableCorked > 0) held.set(this, (held.get(this) ?? 0) + events);
        else if (events > 0) writes.push(events);
        return original.write.call(this, chunk, ...rest);
      };
      proto.uncork = function (this: { writableCorked: number }, ...rest: unknown[]) {
        const r = original.uncork.call(this, ...rest);
        if (this.writableCorked === 0 && (held.get(this) ?? 0) > 0) {
          writes.push(held.get(this)!);
          held.delete(this);
        }
        return r;
      };
    });
    return {
      writes,
      restore() {
        protos.forEach((proto, i) => Object.assign(proto, originals[i]));
      },
    };
  }

  test(`${COUNT} initial ADDED events queued at once: fewer writes than events, every event in order`, async () => {
    for (let i = 0; i < COUNT; i++) {
      const r = await t.request("POST", W, { body: { apiVersion: `${GROUP}/v1`, kind: "Widget", metadata: { name: `batch-${String(i).padStart(2, "0")}` }, spec: { color: "red" } } });
      assert.equal(r.status, 201);
    }
    const counted = countWrites();
    try {
      const w = await t.watch(`${W}?watch=1`);
      try {
        const events = await w.next(COUNT);
        assert.deepEqual(
          events.map((e) => `${e.type} ${e.object.metadata.name}`),
          Array.from({ length: COUNT }, (_, i) => `ADDED batch-${String(i).padStart(2, "0")}`),
        );
        assert.equal(counted.writes.reduce((a, b) => a + b, 0), COUNT, "every event written once");
        assert.ok(counted.writes.length < COUNT / 4, `${COUNT} events in ${counted.writes.length} writes (${counted.writes.join(", ")})`);

        // Once caught up, a live event goes out at once, on its own.
        counted.writes.length = 0;
        const live = await t.request("POST", W, { body: { apiVersion: `${GROUP}/v1`, kind: "Widget", metadata: { name: "batch-live" }, spec: { color: "blue" } } });
        assert.equal(live.status, 201);
        const [e] = await w.next(1);
        assert.equal(`${e.type} ${e.object.metadata.name}`, "ADDED batch-live");
        assert.deepEqual(counted.writes, [1]);
      } finally {
        w.close();
      }
    } finally {
      counted.restore();
    }
  });
});
