// Request bodies: read with a size limit (413 beyond it), and parse JSON
// with a nesting limit checked before parsing (400 beyond it), so hostile
// input costs one bounded pass and never reaches the store.

import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import { badRequest, requestEntityTooLarge } from "../../machinery/index.js";

/** Upstream's limit on a request body. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
export const MAX_JSON_DEPTH = 10_000;

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
  return Buffer.concat(chunks);
}

function tooLarge(size: number, limit: number) {
  return requestEntityTooLarge(`the request body is ${size > limit ? "over" : ""} ${limit} bytes; request entity too large: limit is ${limit}`);
}

/** JSON.parse with a depth check first; errors name the position. */
export function parseJson(body: Buffer | string): unknown {
  const text = typeof body === "string" ? body : body.toString("utf8");
  checkDepth(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the body of the request was in an unknown format: invalid JSON: ${(err as Error).message}`);
  }
}

function checkDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) {
        throw badRequest(`the body of the request was in an unknown format: JSON nested deeper than ${MAX_JSON_DEPTH} levels at position ${i}`);
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}
