// POST /checkpoint/{namespace}/{pod}/{container} end to end: a standalone
// agent on the embedded runtime (real cgroup freezer, real /proc) behind the
// agent's component port as the commands wire it (cli/agent-endpoints.ts),
// callers judged by a real API server's TokenReview and RBAC
// (nodes/checkpoint). Every row of seed 001's checkpoint error table, then
// the archive itself: mode 0600, the container's memory, metadata, thawed.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { agentEndpoints } from "../../cli/agent-endpoints.js";
import { apiServerCheck } from "../../client/api-server-check.js";
import { loadKubeconfig } from "../../client/kubeconfig.js";
import { startComponentServer, type RunningComponentServer } from "../../component/component-server.js";
import { parseFeatureGates } from "../../component/feature-gates.js";
import { issueClientCert } from "../../component/pki.js";
import type { Request, Response } from "../../component/endpoints.js";
import { httpsGet } from "../../component/testing/https-get.js";
import { defaultConfig } from "../config/index.js";
import { startNodeAgent, type NodeAgent } from "../agent.js";
import { CriClient } from "../cri/index.js";
import { criServices } from "../cri/proto.js";
import { eventually } from "../testing/eventually.js";
import { ContainerCheckpoint } from "./checkpoint.js";

const skip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's cgroups and the freezer)" : undefined;
const NODE = "node-ckpt";
const MARKER = "orch-checkpoint-marker-7f3a9";

let api: TestServer;
let agent: NodeAgent;
let root: string;
let port: RunningComponentServer;
let token: string;
let ca: { cert: string; key: string };
let noSupport: { server: grpc.Server; client: CriClient; socket: string };
const servers: RunningComponentServer[] = [];

before(async () => {
  if (skip) return;
  root = mkdtempSync(join(tmpdir(), "nodeagent-ckpt-"));
  mkdirSync(join(root, "manifests"));
  // The shell keeps MARKER in a variable: it is in its memory and its environment.
  writeFileSync(join(root, "manifests", "sleeper.yaml"), [
    "apiVersion: v1", "kind: Pod", "metadata:", "  name: sleeper", "  namespace: default", "spec:", "  terminationGracePeriodSeconds: 1",
    "  containers:", "  - name: main", "    image: busybox",
    "    env:", "    - name: SECRET", `      value: ${MARKER}`,
    "    command: [sh, -c, 'KEEP=\"$SECRET-in-memory\"; while true; do sleep 0.2; done']", "",
  ].join("\n"));
  api = await startTestServer({ modules: builtinModules() });
  token = api.server.credentials.adminToken;
  ca = { cert: readFileSync(join(api.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(api.dataDir, "ca.key"), "utf8") };
  agent = await startNodeAgent({
    stopContainersOnExit: true,
    nodeName: NODE,
    config: { ...defaultConfig(), staticPodPath: join(root, "manifests") },
    rootDir: join(root, "agent"),
    podLogsDir: join(root, "logs"),
    tuning: { plegPeriodMs: 200, housekeepingMs: 300 },
  });
  port = await serve(agentEndpoints(() => agent).extra);
  // A runtime without the call (as containerd 1.6): a RuntimeService serving no method answers UNIMPLEMENTED.
  const socket = join(root, "no-checkpoint.sock");
  const server = new grpc.Server();
  server.addService(criServices().RuntimeService.service, {});
  await new Promise<void>((r, j) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? j(e) : r())));
  noSupport = { server, socket, client: new CriClient({ endpoint: `unix://${socket}` }) };
});

after(async () => {
  if (skip) return;
  for (const s of servers) await s.close();
  noSupport?.client.close();
  noSupport?.server.forceShutdown();
  await agent?.stop();
  await api?.close();
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

async function serve(extra: ReturnType<typeof agentEndpoints>["extra"]): Promise<RunningComponentServer> {
  const s = await startComponentServer({
    name: "orch-nodeagent", bindAddress: "127.0.0.1", port: 0, log: () => {}, featureGates: parseFeatureGates({}),
    apiServer: apiServerCheck(loadKubeconfig(api.server.kubeconfigPath)),
    access: { mode: "Webhook", nodeName: () => NODE, allowedTtlMs: 0, deniedTtlMs: 0 },
    extra,
  });
  servers.push(s);
  return s;
}

const POD = `sleeper-${NODE}`;

async function running(): Promise<void> {
  await eventually(() => agent.pods().find((p) => p.pod.metadata.name === POD)?.status.containerStatuses?.[0]?.state?.running, 30_000, "the sleeper running");
}

test("checkpoint error table (seed 001, \"Errors\"): 401, 404 with the gate off, 404s, 500 from the runtime, 500 without the interface", { skip }, async () => {
  await running();
  const mallory = await issueClientCert(ca, "mallory");
  // Gate off: the same agent behind a port whose handler has ContainerCheckpoint disabled.
  const gateOff = await serve({ "/checkpoint/": Object.assign((req: Request, res: Response, url: URL) => new ContainerCheckpoint({ pods: () => agent.pods(), runtime: noSupport.client, dir: join(root, "x"), enabled: false }).serve(req, res, url), { methods: ["POST"] }) });
  const unsupported = await serve({ "/checkpoint/": Object.assign((req: Request, res: Response, url: URL) => new ContainerCheckpoint({ pods: () => agent.pods(), runtime: noSupport.client, dir: join(root, "x"), enabled: true }).serve(req, res, url), { methods: ["POST"] }) });
  const rows: { name: string; url: string; auth?: { token?: string; clientCert?: { cert: string; key: string } }; status: number; body: RegExp | string; before?: () => void; after?: () => void }[] = [
    { name: "caller unauthenticated", url: `${port.url}/checkpoint/default/${POD}/main`, status: 401, body: "Unauthorized\n" },
    { name: "caller not allowed nodes/checkpoint", url: `${port.url}/checkpoint/default/${POD}/main`, auth: { clientCert: mallory }, status: 403, body: "Forbidden (user=mallory, verb=create, resource=nodes, subresource=checkpoint)\n" },
    { name: "gate ContainerCheckpoint disabled", url: `${gateOff.url}/checkpoint/default/${POD}/main`, auth: { token }, status: 404, body: "404 page not found\n" },
    { name: "namespace not found", url: `${port.url}/checkpoint/nowhere/${POD}/main`, auth: { token }, status: 404, body: "pod does not exist" },
    { name: "pod not found", url: `${port.url}/checkpoint/default/ghost/main`, auth: { token }, status: 404, body: "pod does not exist" },
    { name: "container not found", url: `${port.url}/checkpoint/default/${POD}/other`, auth: { token }, status: 404, body: "container other does not exist" },
    { name: "timeout not an integer (upstream answers 404)", url: `${port.url}/checkpoint/default/${POD}/main?timeout=soon`, auth: { token }, status: 404, body: "cannot parse value of timeout parameter" },
    {
      name: "runtime error during checkpointing",
      url: `${port.url}/checkpoint/default/${POD}/main`, auth: { token }, status: 500,
      body: new RegExp(`^checkpointing of default/${POD}/main failed \\(rpc error: code = Unknown desc = checkpointing container [0-9a-f]+ failed: .*(EEXIST|ENOTDIR)`),
      // The checkpoints directory replaced by a file: the runtime cannot write the archive.
      before: () => { renameSync(join(root, "agent", "checkpoints"), join(root, "ckpt-aside")); writeFileSync(join(root, "agent", "checkpoints"), ""); },
      after: () => { rmSync(join(root, "agent", "checkpoints")); renameSync(join(root, "ckpt-aside"), join(root, "agent", "checkpoints")); },
    },
    { name: "runtime lacks the checkpoint interface", url: `${unsupported.url}/checkpoint/default/${POD}/main`, auth: { token }, status: 500, body: new RegExp(`^checkpointing of default/${POD}/main failed \\(rpc error: code = Unimplemented desc = .*CheckpointContainer`) },
  ];
  for (const row of rows) {
    row.before?.();
    try {
      const r = await httpsGet(row.url, { method: "POST", ...row.auth });
      assert.equal(r.status, row.status, `${row.name}: ${r.text}`);
      if (typeof row.body === "string") assert.equal(r.text, row.body, row.name);
      else assert.match(r.text, row.body, row.name);
    } finally {
      row.after?.();
    }
  }
  // Not a row of the table, but the rest of upstream's route: GET is 405 (after authorization, as the verb is get).
  assert.equal((await httpsGet(`${port.url}/checkpoint/default/${POD}/main`, { token })).status, 405);
  // The container was thawed after the failed attempt.
  assert.ok(!frozen(), "no process of the container is left frozen");
});

/** Whether a process of the sleeper is stopped or frozen (state D/T in /proc or in a freezer group of ours). */
function frozen(): boolean {
  const out = execFileSync("sh", ["-c", "grep -l FROZEN $(find /sys/fs/cgroup/freezer -name freezer.state -path '*orch-embedded*' 2>/dev/null) /dev/null 2>/dev/null || true"], { encoding: "utf8" });
  return out.trim() !== "";
}

test("checkpoint success: 200 with the archive path, mode 0600 under <root-dir>/checkpoints; the tar holds memory, metadata and the file system record; the container runs on", { skip }, async () => {
  await running();
  const before = agent.pods().find((p) => p.pod.metadata.name === POD)!.status.containerStatuses![0]!;
  const r = await httpsGet(`${port.url}/checkpoint/default/${POD}/main?timeout=60`, { method: "POST", token });
  assert.equal(r.status, 200, r.text);
  assert.match(String(r.headers["content-type"]), /^application\/json/);
  const items = (JSON.parse(r.text) as { items: string[] }).items;
  assert.equal(items.length, 1);
  const archive = items[0]!;
  assert.match(archive, new RegExp(`^${join(root, "agent", "checkpoints")}/checkpoint-${POD}_default-main-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\.tar$`));
  assert.equal(statSync(archive).mode & 0o777, 0o600, "readable by root only");
  assert.equal(statSync(join(root, "agent", "checkpoints")).mode & 0o777, 0o700);
  const list = execFileSync("tar", ["-tf", archive], { encoding: "utf8" }).split("\n");
  assert.ok(list.includes("checkpoint.json") && list.includes("config.dump"), list.join(" "));
  const x = mkdtempSync(join(root, "x-"));
  execFileSync("tar", ["-xf", archive, "-C", x]);
  // The container's shell (its other processes: the launcher, a sleep).
  const pids = list.flatMap((l) => /^processes\/(\d+)\/pages\.img$/.exec(l)?.[1] ?? []);
  const pid = pids.find((p) => readFileSync(join(x, "processes", p, "cmdline"), "latin1").startsWith("sh\0-c\0"));
  assert.ok(pid !== undefined, `the shell's pages: ${list.join(" ")}`);
  for (const f of ["cmdline", "environ", "limits", "maps", "files.json", "pages.json"]) assert.ok(list.includes(`processes/${pid}/${f}`), `processes/${pid}/${f}`);
  assert.match(readFileSync(join(x, "processes", pid, "environ"), "latin1"), new RegExp(`SECRET=${MARKER}`));
  assert.ok(readFileSync(join(x, "processes", pid, "pages.img")).includes(`${MARKER}-in-memory`), "the shell's variable is in the dumped memory");
  const files = JSON.parse(readFileSync(join(x, "processes", pid, "files.json"), "utf8")) as { fds: Record<string, string> };
  assert.ok(Object.keys(files.fds).length >= 3, "its open descriptors");
  const meta = JSON.parse(readFileSync(join(x, "checkpoint.json"), "utf8")) as { processes: number[] };
  assert.ok(meta.processes.includes(Number(pid)));
  // Thawed, the same container instance still runs.
  assert.ok(!frozen());
  await new Promise((r) => setTimeout(r, 600));
  const after = agent.pods().find((p) => p.pod.metadata.name === POD)!.status.containerStatuses![0]!;
  assert.equal(after.containerID, before.containerID);
  assert.ok(after.state?.running, "still running");
  const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0];
  assert.notEqual(state, "T", "not stopped");
  assert.ok(!existsSync(`${archive}.part`));
});
