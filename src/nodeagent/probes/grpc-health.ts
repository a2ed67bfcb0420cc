// The gRPC probe (upstream's grpc handler): one call of the standard health
// checking protocol, grpc.health.v1.Health/Check, over plain HTTP/2 to the
// pod IP. Only status SERVING (1) succeeds. The two messages have one field
// each, so they are encoded here by hand rather than through a .proto file.

import * as grpc from "@grpc/grpc-js";

const STATUS = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];

/** HealthCheckRequest { string service = 1; } */
function encodeRequest(service: string): Buffer {
  const name = Buffer.from(service, "utf8");
  if (name.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  for (let n = name.length; ; n >>>= 7) {
    if (n < 0x80) { len.push(n); break; }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), name]);
}

/**
 * HealthCheckResponse { ServingStatus status = 1; }: the status, skipping
 * fields this does not know. An object, because grpc-js takes a falsy decoded
 * message (UNKNOWN is 0) for a missing one.
 */
function decodeResponse(buf: Buffer): { status: number } {
  let i = 0, status = 0;
  const varint = (): number => {
    let v = 0, shift = 0;
    for (;;) {
      const b = buf[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const wire = key & 7;
    if (key >>> 3 === 1 && wire === 0) status = varint();
    else if (wire === 0) varint();
    else if (wire === 2) i += varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`malformed HealthCheckResponse (wire type ${wire})`);
  }
  return { status };
}

export interface GrpcProbeOutcome {
  ok: boolean;
  output: string;
}

export async function grpcHealthCheck(target: { host: string; port: number; service: string; timeoutMs: number }): Promise<GrpcProbeOutcome> {
  const address = `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.user_agent": "orch-probe/1.0" });
  try {
    const status = await new Promise<number>((resolve, reject) => {
      client.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        encodeRequest,
        decodeResponse,
        target.service,
        new grpc.Metadata(),
        { deadline: Date.now() + target.timeoutMs },
        (err, value) => (err ? reject(err) : resolve(value?.status ?? 0)),
      );
    });
    return status === 1 ? { ok: true, output: "" } : { ok: false, output: `service unhealthy (responded with "${STATUS[status] ?? status}")` };
  } catch (err) {
    const e = err as grpc.ServiceError;
    if (e.code === grpc.status.DEADLINE_EXCEEDED) return { ok: false, output: `timeout: health rpc did not complete within ${target.timeoutMs / 1000}s` };
    if (e.code === grpc.status.UNAVAILABLE) return { ok: false, output: `timeout: failed to connect service "${address}" within ${target.timeoutMs / 1000}s: ${e.details}` };
    return { ok: false, output: `error: health rpc probe failed: ${e.details ?? e.message}` };
  } finally {
    client.close();
  }
}
