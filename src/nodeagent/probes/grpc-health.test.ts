// The gRPC probe against a real grpc-js server implementing
// grpc.health.v1.Health/Check (a service per name: SERVING, NOT_SERVING, or
// one that never answers).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { runProbe, type ProbeTarget } from "./probe.js";

const STATUS: Record<string, number> = { "": 1, web: 1, db: 2, starting: 0 };
let server: grpc.Server;
let port: number;

before(async () => {
  server = new grpc.Server();
  // The request is an object: grpc-js servers take a falsy decoded request ("") for a missing one.
  const check: grpc.MethodDefinition<{ service: string }, number> = {
    path: "/grpc.health.v1.Health/Check",
    requestStream: false,
    responseStream: false,
    // HealthCheckRequest { string service = 1 } and HealthCheckResponse { ServingStatus status = 1 }, by hand.
    requestDeserialize: (b: Buffer) => ({ service: b.length > 2 ? b.subarray(2).toString("utf8") : "" }),
    requestSerialize: (r: { service: string }) => Buffer.from(r.service),
    responseSerialize: (status: number) => (status === 0 ? Buffer.alloc(0) : Buffer.from([0x08, status])), // 0 is the default: not written
    responseDeserialize: (b: Buffer) => b[1] ?? 0,
  };
  server.addService({ Check: check }, {
    Check: (call: grpc.ServerUnaryCall<{ service: string }, number>, reply: grpc.sendUnaryData<number>) => {
      if (call.request.service === "hang") return; // never answers: the probe's deadline ends it
      const status = STATUS[call.request.service];
      if (status === undefined) reply({ code: grpc.status.NOT_FOUND, details: "unknown service" });
      else reply(null, status);
    },
  });
  port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
});

after(() => server.forceShutdown());

const target = { podIP: "127.0.0.1", containerId: "c", container: { name: "c" } } as unknown as ProbeTarget;

test("grpc probe: SERVING succeeds, for the whole server and for a named service", async () => {
  assert.deepEqual(await runProbe({ grpc: { port } }, target), { ok: true, output: "" });
  assert.deepEqual(await runProbe({ grpc: { port, service: "web" } }, target), { ok: true, output: "" });
});

test("grpc probe: NOT_SERVING, an unknown service, no server, and no answer within the timeout fail with upstream's wording", async () => {
  assert.deepEqual(await runProbe({ grpc: { port, service: "db" } }, target), { ok: false, output: 'service unhealthy (responded with "NOT_SERVING")' });
  assert.deepEqual(await runProbe({ grpc: { port, service: "starting" } }, target), { ok: false, output: 'service unhealthy (responded with "UNKNOWN")' });
  assert.deepEqual(await runProbe({ grpc: { port, service: "nope" } }, target), { ok: false, output: "error: health rpc probe failed: unknown service" });
  const closed = await runProbe({ grpc: { port: 1 }, timeoutSeconds: 1 }, target);
  assert.equal(closed.ok, false);
  assert.match(closed.output, /^timeout: failed to connect service "127\.0\.0\.1:1" within 1s/);
  assert.deepEqual(await runProbe({ grpc: { port, service: "hang" }, timeoutSeconds: 1 }, target), { ok: false, output: "timeout: health rpc did not complete within 1s" });
});
