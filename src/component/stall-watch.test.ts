// The stall watch: a thread kept busy past the threshold is logged with its
// length; ordinary turns are not.

import { test } from "node:test";
import assert from "node:assert/strict";
import { watchStalls } from "./stall-watch.js";
import { sleep } from "../machinery/until.js";

test("a turn blocked past the threshold is logged with how long; short turns are not; one watch per process", async () => {
  const lines: string[] = [];
  const others: string[] = [];
  const stop = new AbortController();
  watchStalls({ log: (l) => lines.push(l), thresholdMs: 600, intervalMs: 50, signal: stop.signal });
  watchStalls({ log: (l) => others.push(l), thresholdMs: 600, intervalMs: 50, signal: stop.signal });
  try {
    const busy = (ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until);
    };
    await sleep(200);
    busy(200);
    await sleep(300);
    assert.deepEqual(lines, [], "a 200-ms turn is under the threshold");
    busy(1200);
    await sleep(400);
    assert.equal(lines.length, 1, lines.join("\n"));
    const m = /^the event loop was blocked for (\d+\.\d) s \(garbage collection \d+\.\d s of it; heap \d+ MiB\)$/.exec(lines[0]!);
    assert.ok(m, lines[0]);
    assert.ok(Number(m[1]) >= 1.0 && Number(m[1]) <= 1.6, lines[0]);
    assert.deepEqual(others, [], "the second call did not start another watch");
  } finally {
    stop.abort();
  }
});
