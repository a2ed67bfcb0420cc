// parseH2load: the summary lines of h2load 1.52 (nghttp2-client), success and failure.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseH2load } from "./load.js";

const summary = (codes: string, requests = "17873 total, 17937 started, 17873 done, 17873 succeeded, 0 failed, 0 errored, 0 timeout") => `
finished in 6.00s, 2978.83 req/s, 9.65MB/s
requests: ${requests}
status codes: ${codes}
traffic: 57.93MB (60741233) total`;

test("h2load's summary: answered requests per second from the wanted status class", () => {
  const r = parseH2load(summary("17873 2xx, 0 3xx, 0 4xx, 0 5xx"), 200);
  assert.equal(r.answered, 17873);
  assert.ok(Math.abs(r.rate - 17873 / 6) < 1e-9);
});

test("one stray answer in a thousand is left out of the rate; more makes the phase fail, naming them", () => {
  assert.equal(parseH2load(summary("17872 2xx, 0 3xx, 1 4xx, 0 5xx"), 201).answered, 17872);
  // h2load counts a 4xx under "failed" too: 4 clashes in 5,800 creates are 4 strays, not 8.
  const clashes = summary("5796 2xx, 0 3xx, 4 4xx, 0 5xx", "5800 total, 5800 started, 5800 done, 5796 succeeded, 4 failed, 0 errored, 0 timeout");
  assert.equal(parseH2load(clashes, 201).answered, 5796);
  assert.throws(() => parseH2load(summary("17000 2xx, 0 3xx, 873 4xx, 0 5xx"), 201), /873 4xx/);
  assert.throws(() => parseH2load(summary("17873 2xx, 0 3xx, 0 4xx, 0 5xx", "17943 total, 17943 started, 17943 done, 17873 succeeded, 70 failed, 0 errored, 0 timeout"), 200), /70 failed/);
  assert.throws(() => parseH2load("h2load: connection refused", 200), /unexpected output/);
});

test("a run shorter than a second is reported in ms", () => {
  const r = parseH2load(summary("500 2xx, 0 3xx, 0 4xx, 0 5xx").replace("6.00s", "500.00ms"), 200);
  assert.equal(r.rate, 1000);
});
