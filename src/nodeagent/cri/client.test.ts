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

test("over the socket: an abort cancels the call; a socket nobody listens on fails UNAVAILABLE and waitForReady gives up at its deadline", async () => {
  const abort = new AbortController();
  const stopping = client.stopContainer({ containerId: "c1", timeout: 0 }, { signal: abort.signal });
  abort.abort();
  await assert.rejects(stopping, (err: unknown) => err instanceof CriError && err.code === grpc.status.CANCELLED);
  const nobody = new CriClient({ endpoint: join(dir, "nobody.sock") });
  try {
    await assert.rejects(nobody.version({}), (err: unknown) => err instanceof CriError && err.code === grpc.status.UNAVAILABLE && err.rpc === "Version");
    const started = Date.now();
    await assert.rejects(nobody.waitForReady(300), (err: unknown) => err instanceof CriError && err.code === grpc.status.UNAVAILABLE && /nobody\.sock/.test(err.details));
    assert.ok(Date.now() - started < 2000);
  } finally {
    nobody.close();
  }
});

test("the runtime restarts under the client: calls in between fail UNAVAILABLE, then succeed on a new connection", async () => {
  const path = join(dir, "restart.sock");
  const serve = async (name: string): Promise<grpc.Server> => {
    const s = new grpc.Server();
    s.addService(criServices().RuntimeService.service, {
      Version: (_call: unknown, done: grpc.sendUnaryData<unknown>) => done(null, { version: "v1", runtimeName: name, runtimeVersion: "1", runtimeApiVersion: "v1" }),
    });
    await new Promise<void>((resolve, reject) => s.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    return s;
  };
  let s = await serve("first");
  const c = new CriClient({ endpoint: path });
  try {
    assert.equal((await c.version({})).runtimeName, "first");
    s.forceShutdown();
    rmSync(path, { force: true });
    await assert.rejects(c.version({}), (err: unknown) => err instanceof CriError && err.code === grpc.status.UNAVAILABLE);
    s = await serve("second");
    await c.waitForReady(5000);
    assert.equal((await c.version({})).runtimeName, "second");
  } finally {
    c.close();
    s.forceShutdown();
  }
});

test("a large answer (a long container list) arrives whole", async () => {
  const path = join(dir, "large.sock");
  const s = new grpc.Server();
  const many = Array.from({ length: 5000 }, (_, i) => ({ id: `c${i}`.padEnd(64, "x"), podSandboxId: "s", labels: { a: "b".repeat(100) } }));
  s.addService(criServices().RuntimeService.service, {
    ListContainers: (_call: unknown, done: grpc.sendUnaryData<unknown>) => done(null, { containers: many }),
  });
  await new Promise<void>((resolve, reject) => s.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  const c = new CriClient({ endpoint: path });
  try {
    const { containers } = await c.listContainers({});
    assert.equal(containers.length, 5000);
    assert.equal(containers[4999]!.id, many[4999]!.id);
  } finally {
    c.close();
    s.forceShutdown();
  }
});
