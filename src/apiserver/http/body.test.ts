// readBody on a request stream: the whole body, 413 past the limit (the rest
// discarded and the request destroyed), the stream's error, and a stream that
// closes before its end (a client gone mid-body) as a premature close.

import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import type { IncomingMessage } from "node:http";
import { isApiError } from "../../machinery/index.js";
import { readBody } from "./body.js";

function request(headers: Record<string, string> = {}): PassThrough & { headers: Record<string, string> } {
  return Object.assign(new PassThrough(), { headers });
}
const asIncoming = (r: PassThrough) => r as unknown as IncomingMessage;

test("the body's chunks, joined", async () => {
  const r = request();
  const body = readBody(asIncoming(r));
  r.write("ab");
  r.write("cd");
  r.end("e");
  assert.equal((await body).toString(), "abcde");
});

test("past the limit: 413, and the request is destroyed", async () => {
  const r = request();
  const body = readBody(asIncoming(r), 4);
  r.write("abc");
  r.write("def");
  await assert.rejects(body, (err) => isApiError(err, "RequestEntityTooLarge"));
  assert.equal(r.destroyed, true);
});

test("the stream's error is the read's, and a close before the end is a premature close", async () => {
  const failing = request();
  const failed = readBody(asIncoming(failing));
  failing.destroy(new Error("reset by peer"));
  await assert.rejects(failed, /reset by peer/);
  const gone = request();
  const closed = readBody(asIncoming(gone));
  gone.write("partial");
  gone.destroy();
  await assert.rejects(closed, { code: "ERR_STREAM_PREMATURE_CLOSE" });
  const already = request();
  already.destroy();
  await assert.rejects(readBody(asIncoming(already)), { code: "ERR_STREAM_PREMATURE_CLOSE" });
});
