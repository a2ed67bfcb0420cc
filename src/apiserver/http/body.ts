// Request bodies: read with a size limit (413 beyond it), so hostile input
// costs one bounded pass. Parsing is ./decode-body.ts's (by Content-Type),
// with the limits of machinery/decode.

import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import { requestEntityTooLarge } from "../../machinery/index.js";
import { MAX_BODY_BYTES } from "../../machinery/decode/index.js";

/**
 * Who wants a request's body once it has been read, by request: the audit
 * filter at its Request and RequestResponse levels (filters/audit.ts), nobody
 * otherwise.
 */
export const bodyObservers = new WeakMap<object, (body: Buffer) => void>();

export async function readBody(req: IncomingMessage | Http2ServerRequest, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) {
    req.resume();
    throw tooLarge(declared, limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw tooLarge(size, limit);
    }
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  bodyObservers.get(req)?.(body);
  return body;
}

function tooLarge(size: number, limit: number) {
  return requestEntityTooLarge(`the request body is ${size > limit ? "over" : ""} ${limit} bytes; request entity too large: limit is ${limit}`);
}
