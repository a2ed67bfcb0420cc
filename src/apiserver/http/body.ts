// Request bodies: read with a size limit (413 beyond it), so hostile input
// costs one bounded pass. Parsing is ./decode-body.ts's (by Content-Type),
// with the limits of machinery/decode.

import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import { ApiError, requestEntityTooLarge } from "../../machinery/index.js";
import { MAX_BODY_BYTES } from "../../machinery/decode/index.js";

/**
 * Who wants a request's body once it has been read (its bytes), and decoded
 * when it is an object (in any encoding), by request: the audit filter at its
 * Request and RequestResponse levels (filters/audit.ts), nobody otherwise.
 */
export interface BodyObserver {
  bytes(body: Buffer): void;
  object(value: unknown): void;
}
export const bodyObservers = new WeakMap<object, BodyObserver>();

/** How long each request's body may take to arrive, set by the listener (listener.ts, --request-body-timeout). */
export const requestBodyTimeouts = new WeakMap<object, number>();

/** Hands a request's decoded object to its observer, if it has one (handlers/request.ts#readObject). */
export function observeRequestObject(req: object, value: unknown): void {
  bodyObservers.get(req)?.object(value);
}

export async function readBody(req: IncomingMessage | Http2ServerRequest, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) {
    req.resume();
    throw tooLarge(declared, limit);
  }
  const chunks: Buffer[] = [];
  // A body that trickles (slowloris after the headers, from an authenticated client too) has a deadline.
  const ms = requestBodyTimeouts.get(req);
  let timedOut = false;
  const timer = ms === undefined || ms <= 0 || req.complete ? undefined : setTimeout(() => {
    timedOut = true;
    req.destroy(new Error("request body read timed out"));
  }, ms);
  try {
    await collect(req, limit, chunks);
  } catch (err) {
    // The request (HTTP/1.1: its connection) is gone: this 408 is for the log, the metrics and the audit, as Go's ReadTimeout closes.
    if (timedOut) throw new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `the request body was not received within ${ms! / 1000} s`, reason: "Timeout", code: 408 });
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const body = Buffer.concat(chunks);
  bodyObservers.get(req)?.bytes(body);
  return body;
}

/**
 * The body's chunks into `chunks`, by the stream's events. It was a `for
 * await` over the request, whose async iterator (a promise and an
 * end-of-stream watcher per request) was 1.5 % of a create's CPU; the
 * outcomes are the iterator's: the stream's error, a premature close when it
 * closes before its end, and past `limit` a 413 with the rest of the body
 * discarded and the request destroyed (as leaving the loop did).
 */
function collect(req: IncomingMessage | Http2ServerRequest, limit: number, chunks: Buffer[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let size = 0;
    const settle = (err: Error | undefined) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      if (err === undefined) resolve();
      else reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settle(tooLarge(size, limit));
        req.resume();
        req.destroy();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle(undefined);
    const onError = (err: Error) => settle(err);
    const onClose = () => settle(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    if (req.readableEnded) {
      settle(undefined);
      return;
    }
    if (req.destroyed) {
      onClose();
      return;
    }
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

function tooLarge(size: number, limit: number) {
  return requestEntityTooLarge(`the request body is ${size > limit ? "over" : ""} ${limit} bytes; request entity too large: limit is ${limit}`);
}
