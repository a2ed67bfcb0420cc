// CriClient against a gRPC server built from the same .proto: field names and
// numbers, enum names, deadlines and error codes as the agent sees them. The
// runtimes themselves are tested by the conformance suite (testing/runtime.case.ts).

import * as grpc from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { CriClient, CriError, criServices, unixTarget } from "./index.js";

let dir: string;
let server: grpc.Server;
let client: CriClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "orch-cri-client-"));
  server = new grpc.Server();
  const { RuntimeService, ImageService } = criServices();
  type Call = grpc.ServerUnaryCall<Record<string, unknown>, unknown>;
  type Done = grpc.sendUnaryData<unknown>;
  server.addService(RuntimeService.service, {
    Version: (call: Call, done: Done) => done(null, { version: call.request.version, runtimeName: "fake", runtimeVersion: "1.0.0", runtimeApiVersion: "v1" }),
    ListContainers: (call: Call, done: Done) => {
      const filter = call.request.filter as { state: { state: string } | null; labelSelector: Record<string, string> };
      done(null, { containers: [{ id: "c1", state: filter.state?.state ?? "CONTAINER_UNKNOWN", createdAt: 1_700_000_000_123_456_789, labels: filter.labelSelector }] });
    },
    ContainerStatus: (_call: Call, done: Done) => done({ code: grpc.status.NOT_FOUND, details: 'container "x" not found' }),
    StopContainer: () => {}, // never answers: the client's deadline must end the call
  });
  server.addService(ImageService.service, {
    ImageStatus: (_call: Call, done: Done) => done(null, {}),
  });
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${join(dir, "cri.sock")}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  client = new CriClient({ endpoint: `unix://${join(dir, "cri.sock")}` });
  await client.waitForReady(5000);
});

after(() => {
  client.close();
  server.forceShutdown();
  rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
});

test("version round-trips lowerCamelCase fields", async () => {
  assert.deepEqual(await client.version({ version: "v1" }), { version: "v1", runtimeName: "fake", runtimeVersion: "1.0.0", runtimeApiVersion: "v1" });
});

test("enums travel as names, int64 as number, maps as objects, defaults filled", async () => {
  const { containers } = await client.listContainers({ filter: { state: { state: "CONTAINER_RUNNING" }, labelSelector: { app: "web" } } });
  assert.equal(containers.length, 1);
  const c = containers[0]!;
  assert.equal(c.state, "CONTAINER_RUNNING");
  assert.equal(typeof c.createdAt, "number");
  assert.ok(Math.abs(c.createdAt - 1_700_000_000_123_456_789) < 1024); // beyond 2^53 precision, but close
  assert.deepEqual(c.labels, { app: "web" });
  assert.equal(c.podSandboxId, "");
  assert.equal(c.metadata, null);
});

test("an absent image answers image null, not an error", async () => {
  const r = await client.imageStatus({ image: { image: "busybox" } });
  assert.equal(r.image, null);
});

test("errors carry the gRPC code and the runtime's message", async () => {
  await assert.rejects(client.containerStatus({ containerId: "x" }), (err: unknown) => {
    assert.ok(err instanceof CriError);
    assert.equal(err.code, grpc.status.NOT_FOUND);
    assert.equal(err.codeName, "NOT_FOUND");
    assert.equal(err.details, 'container "x" not found');
    assert.equal(err.rpc, "ContainerStatus");
    return true;
  });
});

test("a call past its deadline fails with DEADLINE_EXCEEDED", async () => {
  const started = Date.now();
  await assert.rejects(client.stopContainer({ containerId: "c1", timeout: 0 }, { timeoutMs: 200 }), (err: unknown) => err instanceof CriError && err.code === grpc.status.DEADLINE_EXCEEDED);
  assert.ok(Date.now() - started < 2000);
});

test("an unimplemented RPC is UNIMPLEMENTED", async () => {
  await assert.rejects(client.checkpointContainer({ containerId: "c1" }), (err: unknown) => err instanceof CriError && err.code === grpc.status.UNIMPLEMENTED);
});

test("endpoints: bare paths and unix: forms normalize; other schemes are refused", () => {
  assert.equal(unixTarget("/run/x.sock"), "unix:///run/x.sock");
  assert.equal(unixTarget("unix:/run/x.sock"), "unix:///run/x.sock");
  assert.equal(unixTarget("unix:///run/x.sock"), "unix:///run/x.sock");
  assert.throws(() => unixTarget("tcp://127.0.0.1:1"), /only unix/);
});

test("in process: the same messages, errors, deadlines and aborts as over the socket; a separate image endpoint is still dialled", async () => {
  const fail = (code: grpc.status, message: string) => Object.assign(new Error(message), { code });
  const calls: string[] = [];
  const local = new CriClient({
    endpoint: "unix:///nonexistent/in-process.sock",
    imageEndpoint: `unix://${join(dir, "cri.sock")}`,
    inProcess: (name, request) => {
      calls.push(name);
      const r = request as Record<string, unknown>;
      if (name === "version") return { version: r.version, runtimeName: "fake", runtimeVersion: "1.0.0", runtimeApiVersion: "v1" };
      if (name === "listContainers") return { containers: [{ id: "c1", state: (r.filter as { state: { state: string } }).state.state, createdAt: 1_700_000_000_123_456_789, labels: { app: "web" } }] };
      if (name === "containerStatus") throw fail(grpc.status.NOT_FOUND, 'container "x" not found');
      if (name === "stopContainer") return new Promise(() => {}); // never answers
      throw new Error("boom"); // no code: UNKNOWN
    },
  });
  try {
    assert.deepEqual(await local.version({ version: "v1" }), await client.version({ version: "v1" }));
    const request = { filter: { state: { state: "CONTAINER_RUNNING" as const }, labelSelector: { app: "web" } } };
    assert.deepEqual(await local.listContainers(request), await client.listContainers(request), "defaults filled as decoded from the wire");
    await assert.rejects(local.containerStatus({ containerId: "x" }), (err: unknown) => err instanceof CriError && err.code === grpc.status.NOT_FOUND && err.details === 'container "x" not found' && err.rpc === "ContainerStatus");
    await assert.rejects(local.removeContainer({ containerId: "x" }), (err: unknown) => err instanceof CriError && err.code === grpc.status.UNKNOWN && err.details === "boom");
    await assert.rejects(local.stopContainer({ containerId: "c1", timeout: 0 }, { timeoutMs: 100 }), (err: unknown) => err instanceof CriError && err.code === grpc.status.DEADLINE_EXCEEDED);
    const abort = new AbortController();
    const stopping = local.stopContainer({ containerId: "c1", timeout: 0 }, { signal: abort.signal });
    abort.abort();
    await assert.rejects(stopping, (err: unknown) => err instanceof CriError && err.code === grpc.status.CANCELLED);
    assert.equal((await local.imageStatus({ image: { image: "busybox" } })).image, null);
    assert.ok(!calls.includes("imageStatus"), "image calls went to the image endpoint");
  } finally {
    local.close();
  }
});
