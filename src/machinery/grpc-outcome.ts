// gRPC over plain node:http2, the part both of our own clients share (etcd's
// in storage, the CRI runtime's in the node agent): a message's 5-byte frame,
// and a call's status from its headers, trailers and reset code, with the
// codes and messages grpc-js gives for the same outcome (callers sort errors
// by them).

import * as http2 from "node:http2";

/** gRPC status codes (the subset these transports produce or map). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** A call's failure: its code and message. */
export interface GrpcStatus {
  code: number;
  details: string;
}

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_INADEQUATE_SECURITY } = http2.constants;

/** One uncompressed message, with its 5-byte prefix. */
export function grpcFrame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** The call's outcome from its headers and trailers (a trailers-only answer has grpc-status in the headers); undefined for OK. */
export function callOutcome(headers: http2.IncomingHttpHeaders | undefined, trailers: http2.IncomingHttpHeaders | undefined, rstCode: number | undefined): GrpcStatus | undefined {
  const status = trailers?.["grpc-status"] ?? headers?.["grpc-status"];
  if (status !== undefined) {
    const code = Number(status);
    if (code === GrpcCode.OK) return undefined;
    const raw = trailers?.["grpc-message"] ?? headers?.["grpc-message"];
    return { code: Number.isInteger(code) ? code : GrpcCode.UNKNOWN, details: decodeMessage(typeof raw === "string" ? raw : "") };
  }
  const http = Number(headers?.[":status"] ?? 200);
  if (http !== 200) return httpStatus(http);
  return resetStatus(rstCode);
}

/** A stream that failed locally (its session died, or it was reset). */
export function streamFailure(err: Error, rstCode: number | undefined): GrpcStatus {
  if ((err as { code?: string }).code === "ERR_HTTP2_STREAM_ERROR") return resetStatus(rstCode);
  return { code: GrpcCode.UNAVAILABLE, details: `Connection dropped: ${err.message}` };
}

function resetStatus(rstCode: number | undefined): GrpcStatus {
  switch (rstCode) {
    case undefined:
    case 0:
      return { code: GrpcCode.UNAVAILABLE, details: "Connection dropped" };
    case NGHTTP2_REFUSED_STREAM:
      return { code: GrpcCode.UNAVAILABLE, details: "Stream refused by server" };
    case NGHTTP2_CANCEL:
      return { code: GrpcCode.CANCELLED, details: "Call cancelled" };
    case NGHTTP2_ENHANCE_YOUR_CALM:
      return { code: GrpcCode.RESOURCE_EXHAUSTED, details: "Bandwidth exhausted or memory limit exceeded" };
    case NGHTTP2_INADEQUATE_SECURITY:
      return { code: GrpcCode.PERMISSION_DENIED, details: "Protocol not secure enough" };
    default:
      return { code: GrpcCode.INTERNAL, details: `Received RST_STREAM with code ${rstCode}` };
  }
}

/** A non-gRPC HTTP answer (a proxy, a wrong port or socket), mapped as gRPC's HTTP-to-status table does. */
function httpStatus(status: number): GrpcStatus {
  const code =
    status === 400 ? GrpcCode.INTERNAL
    : status === 401 ? GrpcCode.UNAUTHENTICATED
    : status === 403 ? GrpcCode.PERMISSION_DENIED
    : status === 404 ? GrpcCode.UNIMPLEMENTED
    : status === 429 || status === 502 || status === 503 || status === 504 ? GrpcCode.UNAVAILABLE
    : GrpcCode.UNKNOWN;
  return { code, details: `Received HTTP status code ${status}` };
}

/** grpc-message is percent-encoded. */
function decodeMessage(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
