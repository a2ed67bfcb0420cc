// The pod-info gRPC interface with @grpc/grpc-js as an independent client on
// the real UNIX socket: FAILED_PRECONDITION before the state is initialized,
// then a joined agent (real API server, embedded runtime) with gate PodsAPI:
// ListPods, GetPod, NOT_FOUND, field masks (metadata, JSON and binary forms),
// WatchPods messages as pods come and go, answers after the API server is
// gone; and no socket with the gate at its default (off).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import type { Pod } from "../../api/core/types.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { RestClient, loadKubeconfig } from "../../client/index.js";
import { parseFeatureGates } from "../../component/feature-gates.js";
import { decodeMessage } from "../../machinery/codec/protobuf/index.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { defaultConfig } from "../config/index.js";
import { startNodeAgent, type NodeAgent } from "../agent.js";
import { eventually } from "../testing/eventually.js";
import { POD_TYPE, PodInfoServer, podsService } from "./pod-info.js";

const PODS = { group: "", version: "v1", resource: "pods", namespaced: true };
const NAMESPACES = { group: "", version: "v1", resource: "namespaces", namespaced: false };
const NODE = "node-podinfo";
const skip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's namespaces)" : undefined;

const registry = new SchemaRegistry();
for (const m of builtinModules()) m.registerSchemas(registry);
const decode = (b: Buffer) => decodeMessage(b, POD_TYPE, registry) as unknown as Pod;

type Call = (req: object, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, v: { pods?: Buffer[]; pod?: Buffer }) => void) => void;
interface Client { ListPods: Call; GetPod: Call; WatchPods(req: object, md: grpc.Metadata): grpc.ClientReadableStream<{ pod: Buffer }>; close(): void }

const connect = (socket: string) => new (podsService())(`unix://${socket}`, grpc.credentials.createInsecure()) as unknown as Client;
function call(c: Client, name: "ListPods" | "GetPod", req: object, md: Record<string, string | Buffer> = {}): Promise<{ error?: grpc.ServiceError; value?: { pods?: Buffer[]; pod?: Buffer } }> {
  const m = new grpc.Metadata();
  for (const [k, v] of Object.entries(md)) m.set(k, v);
  return new Promise((resolve) => c[name](req, m, (error, value) => resolve(error ? { error } : { value })));
}

let root: string;
before(() => {
  if (!skip) root = mkdtempSync(join(tmpdir(), "nodeagent-podinfo-"));
});
after(() => {
  if (!skip) rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

test("pod-info before the state is initialized: every call FAILED_PRECONDITION; after: answers; socket mode 0600", async () => {
  const dir = mkdtempSync(join(tmpdir(), "podinfo-unit-"));
  const socket = join(dir, "pods", "nodeagent.sock");
  const pod = { metadata: { name: "p", namespace: "default", uid: "u-1" }, spec: { containers: [{ name: "c", image: "busybox" }] } } as Pod;
  const server = new PodInfoServer({ socket, pods: () => [{ pod, status: { phase: "Running" } }], subscribe: () => () => {} });
  await server.start();
  const c = connect(socket);
  try {
    assert.equal(statSync(socket).mode & 0o777, 0o600);
    for (const name of ["ListPods", "GetPod"] as const) {
      const r = await call(c, name, { podUID: "u-1" });
      assert.equal(r.error?.code, grpc.status.FAILED_PRECONDITION, name);
      assert.match(r.error?.details ?? "", /not initialized/);
    }
    const watchError = await new Promise<grpc.ServiceError>((resolve) => c.WatchPods({}, new grpc.Metadata()).on("error", resolve).on("data", () => {}));
    assert.equal(watchError.code, grpc.status.FAILED_PRECONDITION);
    server.markInitialized();
    const list = await call(c, "ListPods", {});
    assert.deepEqual(list.value?.pods?.map((b) => [decode(b).metadata.uid, decode(b).status?.phase]), [["u-1", "Running"]]);
    assert.equal((await call(c, "GetPod", { podUID: "nope" })).error?.code, grpc.status.NOT_FOUND);
    assert.equal((await call(c, "GetPod", { podUID: "" })).error?.code, grpc.status.INVALID_ARGUMENT);
    const bad = await call(c, "ListPods", {}, { "field-mask": "status.phase,nonsense.x" });
    assert.deepEqual([bad.error?.code, bad.error?.details], [grpc.status.INVALID_ARGUMENT, 'invalid field mask path "nonsense.x"']);
  } finally {
    c.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("joined agent with PodsAPI: list, get, field masks, a watch message per change, answers without the API server", { skip }, async () => {
  mkdirSync(join(root, "manifests"));
  const server: TestServer = await startTestServer({ modules: builtinModules() });
  const client = new RestClient(loadKubeconfig(server.server.kubeconfigPath));
  let agent: NodeAgent | undefined;
  let c: Client | undefined;
  let serverClosed = false;
  try {
    for (const name of ["default", "orch-node-lease"]) await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } }).catch(() => {});
    agent = await startNodeAgent({
      stopContainersOnExit: true, client, nodeName: NODE,
      featureGates: parseFeatureGates({ PodsAPI: true }),
      config: { ...defaultConfig(), staticPodPath: join(root, "manifests"), nodeStatusUpdateFrequency: 500 },
      rootDir: join(root, "agent"), podLogsDir: join(root, "logs"),
      tuning: { plegPeriodMs: 200, housekeepingMs: 300, leaseRenewIntervalMs: 500 },
    });
    const socket = join(root, "agent", "pods", "nodeagent.sock");
    assert.equal(statSync(socket).mode & 0o777, 0o600, "local administrators only");
    c = connect(socket);
    await eventually(async () => ((await call(c!, "ListPods", {})).value ? true : undefined), 10_000, "initialized");

    // A watch first, then a pod bound to the node: messages follow its local state.
    const seen: Pod[] = [];
    const md = new grpc.Metadata();
    md.set("field-mask", "metadata.name,metadata.uid,status.phase");
    const watch = c.WatchPods({}, md);
    watch.on("data", (m: { pod: Buffer }) => seen.push(decode(m.pod)));
    watch.on("error", () => {});
    const pod = (name: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: "main", image: "busybox", command: ["sleep", "3600"] }] } });
    const web = await client.create<Pod>(PODS, pod("web"));
    await eventually(() => (seen.some((p) => p.metadata.uid === web.metadata.uid && p.status?.phase === "Running") ? true : undefined), 30_000, "a Running message for web");
    const mine = seen.filter((p) => p.metadata.uid === web.metadata.uid);
    assert.deepEqual(Object.keys(mine.at(-1)!).sort(), ["metadata", "status"], "the mask keeps only what it names");
    assert.equal(mine.at(-1)!.spec, undefined);

    // ListPods and GetPod: the full pod by default.
    const list = (await call(c, "ListPods", {})).value!.pods!.map(decode);
    const full = list.find((p) => p.metadata.uid === web.metadata.uid)!;
    assert.equal(full.spec?.containers?.[0]?.name, "main");
    assert.equal(full.status?.phase, "Running");
    assert.ok((full.status?.podIPs?.length ?? 0) > 0);
    const got = decode((await call(c, "GetPod", { podUID: web.metadata.uid })).value!.pod!);
    assert.equal(got.metadata.name, "web");
    // The seed's example mask, in the binary form of google.protobuf.FieldMask (paths = 1).
    const bin = Buffer.concat(["status.phase", "status.podIPs"].map((p) => Buffer.concat([Buffer.from([0x0a, p.length]), Buffer.from(p)])));
    const masked = decode((await call(c, "GetPod", { podUID: web.metadata.uid }, { "field-mask-bin": bin })).value!.pod!);
    assert.deepEqual(Object.keys(masked), ["status"]);
    assert.deepEqual(Object.keys(masked.status!).sort(), ["phase", "podIPs"]);
    assert.equal((await call(c, "GetPod", { podUID: "0000-unknown" })).error?.code, grpc.status.NOT_FOUND);

    // A second pod: its own messages; deleting it: more messages for it as it stops and leaves the node.
    const db = await client.create<Pod>(PODS, pod("db"));
    await eventually(() => (seen.some((p) => p.metadata.uid === db.metadata.uid && p.status?.phase === "Running") ? true : undefined), 30_000, "a Running message for db");
    const before = seen.filter((p) => p.metadata.uid === db.metadata.uid).length;
    await client.delete(PODS, { namespace: "default", name: "db", gracePeriodSeconds: 1 });
    await eventually(() => (seen.filter((p) => p.metadata.uid === db.metadata.uid).length > before ? true : undefined), 30_000, "messages for db's deletion");
    await eventually(async () => ((await call(c!, "GetPod", { podUID: db.metadata.uid })).error?.code === grpc.status.NOT_FOUND ? true : undefined), 30_000, "db gone from the node");
    assert.ok(!seen.some((p) => p.metadata.uid !== web.metadata.uid && p.metadata.uid !== db.metadata.uid), "messages only for the node's pods");

    // The control plane goes away: the interface still answers from the agent's knowledge.
    await server.close();
    serverClosed = true;
    const offline = (await call(c, "ListPods", {})).value!.pods!.map(decode);
    assert.equal(offline.find((p) => p.metadata.uid === web.metadata.uid)?.status?.phase, "Running");
    watch.cancel();
  } finally {
    c?.close();
    await agent?.stop();
    client.close();
    if (!serverClosed) await server.close();
  }
});

test("gate PodsAPI at its default (off): no pod-info socket", { skip }, async () => {
  const agent = await startNodeAgent({ stopContainersOnExit: true, nodeName: "node-podinfo-off", config: { ...defaultConfig(), staticPodPath: join(root, "none") }, rootDir: join(root, "off"), podLogsDir: join(root, "logs-off") });
  try {
    assert.ok(existsSync(join(root, "off", "pods")));
    assert.ok(!existsSync(join(root, "off", "pods", "nodeagent.sock")));
  } finally {
    await agent.stop();
  }
});
