// Reading the API server's answers: the body of a completed stream, the
// Protobuf envelope when the server chose it, and the error of a non-2xx
// answer (the server's Status unchanged, seed 000 "Status objects").

import { constants, type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { ApiError, buildStatus, isStatusObject, type StatusReason } from "../../machinery/index.js";
import { PROTOBUF_MEDIA_TYPES } from "../../machinery/naming.js";
import { decodeEnvelope, hasProtobufMagic } from "../../machinery/codec/protobuf/index.js";
import type { ProtobufDecoding } from "./types.js";

export function isProtobufResponse(headers: IncomingHttpHeaders): boolean {
  const type = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  return PROTOBUF_MEDIA_TYPES.includes(type);
}

/**
 * A Protobuf body: rejected without the 4-byte magic prefix, as the seed
 * requires of clients ("Protobuf envelope"), then decoded with the schemas.
 */
export function decodeProtobufResponse(body: Buffer, decoding: ProtobufDecoding | undefined, what: string): unknown {
  if (!hasProtobufMagic(body)) {
    throw new Error(`${what}: the server answered with a Protobuf content type but the body lacks the prefix 6b 38 73 00: ${preview(body)}`);
  }
  if (decoding === undefined) throw new Error(`${what}: the server answered in Protobuf, which this client did not ask for`);
  return decodeEnvelope(body, decoding.schemas, decoding.lookupType);
}

/** The server's Status, unchanged; a Status built from the code when the body is not one. */
export function errorFromResponse(code: number, body: Buffer, protobuf?: ProtobufDecoding): ApiError {
  if (protobuf !== undefined && hasProtobufMagic(body)) {
    try {
      const status = decodeEnvelope(body, protobuf.schemas, protobuf.lookupType);
      if (isStatusObject(status)) return new ApiError(status);
    } catch {
      // not a Status: described below
    }
  }
  const text = body.toString("utf8");
  try {
    const parsed: unknown = JSON.parse(text);
    if (isStatusObject(parsed)) return new ApiError(parsed);
  } catch {
    // not JSON: described below
  }
  const message = text.trim() !== "" ? text.trim() : `the server responded with status code ${code} but did not return more information`;
  return new ApiError(buildStatus({ code, reason: reasonForCode(code), message }));
}

/** upstream client-go's mapping from an HTTP status without a Status body to a reason. */
function reasonForCode(code: number): StatusReason {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "";
  }
}

/** The whole body of a response stream; throws when the connection was lost before its end. */
export async function readAll(stream: ClientHttp2Stream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  ensureComplete(stream);
  return Buffer.concat(chunks);
}

/**
 * A stream cut by a lost connection ends its iteration as quietly as one the
 * server finished; only the missing end of stream tells them apart.
 */
export function ensureComplete(stream: ClientHttp2Stream): void {
  if (stream.readableEnded && (stream.rstCode === undefined || stream.rstCode === constants.NGHTTP2_NO_ERROR)) return;
  const err = new Error(`the connection to the API server was lost mid-response (HTTP/2 stream reset, code ${stream.rstCode ?? "none"})`);
  (err as Error & { code: string }).code = "ECONNRESET";
  throw err;
}

/** The start of a body, for an error message. */
export function preview(body: Buffer): string {
  const text = body.toString("utf8");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
