// Device plugins end to end: a v1beta1 plugin written here (a grpc-js server
// on its own socket in <root-dir>/device-plugins) registers two devices with
// the agent joined to a real API server with the real scheduler. The node
// shows the extended resource; two pods requesting one each get distinct
// devices (the plugin's Allocate answer: an env var, a mount, a device node;
// PreStartContainer asked for); a third stays Pending with the scheduler's
// "Insufficient vendor/device"; the allocations survive an agent restart
// (checkpoint file) and a device is reused only once its pod is gone.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import type { Node, Pod } from "../../api/core/types.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { RestClient, loadKubeconfig } from "../../client/index.js";
import { namingFor } from "../../machinery/naming.js";
import { Scheduler } from "../../scheduler/index.js";
import { defaultConfig } from "../config/index.js";
import { startNodeAgent, type NodeAgent } from "../agent.js";
import { eventually } from "../testing/eventually.js";
import { devicePluginServices } from "./device-manager.js";

const PODS = { group: "", version: "v1", resource: "pods", namespaced: true };
const NODES = { group: "", version: "v1", resource: "nodes", namespaced: false };
const NAMESPACES = { group: "", version: "v1", resource: "namespaces", namespaced: false };
const NODE = "node-devices";
const RESOURCE = "vendor/device";
const skip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's namespaces)" : undefined;

let server: TestServer;
let client: RestClient;
let agent: NodeAgent;
let root: string;
let plugin: grpc.Server;
const abort = new AbortController();
let scheduling: Promise<void>;
const preStarts: string[][] = [];
const logs: string[] = [];

const pluginDir = () => join(root, "agent", "device-plugins");

function startAgent(stopContainersOnExit: boolean): Promise<NodeAgent> {
  return startNodeAgent({
    stopContainersOnExit,
    client,
    nodeName: NODE,
    config: { ...defaultConfig(), staticPodPath: join(root, "manifests"), nodeStatusUpdateFrequency: 500 },
    rootDir: join(root, "agent"),
    podLogsDir: join(root, "logs"),
    tuning: { plegPeriodMs: 200, housekeepingMs: 300, leaseRenewIntervalMs: 500 },
    log: (l) => logs.push(l),
  });
}

/** The plugin's own socket; it answers Allocate with an env var, a mount and a device node naming the devices. */
async function startPlugin(): Promise<grpc.Server> {
  const s = new grpc.Server();
  s.addService(devicePluginServices().DevicePlugin.service, {
    GetDevicePluginOptions: (_c: unknown, done: grpc.sendUnaryData<object>) => done(null, { preStartRequired: true, getPreferredAllocationAvailable: false }),
    ListAndWatch: (call: grpc.ServerWritableStream<object, object>) => {
      call.write({ devices: [{ ID: "dev-a", health: "Healthy" }, { ID: "dev-b", health: "Healthy" }] });
      // Kept open: the device list holds until the plugin goes.
    },
    Allocate: (call: grpc.ServerUnaryCall<{ containerRequests: { devicesIds: string[] }[] }, object>, done: grpc.sendUnaryData<object>) => {
      done(null, {
        containerResponses: call.request.containerRequests.map((r) => ({
          envs: { VENDOR_DEVICE: r.devicesIds.join(",") },
          mounts: [{ containerPath: "/vendor", hostPath: join(root, "vendor", r.devicesIds[0]!), readOnly: true }],
          devices: [{ containerPath: "/dev/vendor0", hostPath: "/dev/zero", permissions: "r" }],
          annotations: { "vendor/devices": r.devicesIds.join(",") },
        })),
      });
    },
    PreStartContainer: (call: grpc.ServerUnaryCall<{ devicesIds: string[] }, object>, done: grpc.sendUnaryData<object>) => {
      preStarts.push(call.request.devicesIds);
      done(null, {});
    },
    GetPreferredAllocation: (_c: unknown, done: grpc.sendUnaryData<object>) => done({ code: grpc.status.UNIMPLEMENTED, details: "no preference" }),
  });
  await new Promise<void>((r, j) => s.bindAsync(`unix://${join(pluginDir(), "vendor.sock")}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? j(e) : r())));
  return s;
}

/** The plugin's Register call on the agent's socket. */
function register(request: object): Promise<string | undefined> {
  const c = new (devicePluginServices().Registration)(`unix://${join(pluginDir(), "nodeagent.sock")}`, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    (c as unknown as { Register(r: object, cb: (e: grpc.ServiceError | null) => void): void }).Register(request, (err) => {
      c.close();
      resolve(err ? err.details : undefined);
    });
  });
}

const vendorRequest = { version: "v1beta1", endpoint: "vendor.sock", resourceName: RESOURCE, options: { preStartRequired: true } };

before(async () => {
  if (skip) return;
  root = mkdtempSync(join(tmpdir(), "nodeagent-devices-"));
  mkdirSync(join(root, "manifests"));
  for (const d of ["dev-a", "dev-b"]) {
    mkdirSync(join(root, "vendor", d), { recursive: true });
    writeFileSync(join(root, "vendor", d, "id"), `${d}\n`);
  }
  server = await startTestServer({ modules: builtinModules() });
  client = new RestClient(loadKubeconfig(server.server.kubeconfigPath));
  for (const name of ["default", "orch-node-lease"]) await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } }).catch(() => {});
  agent = await startAgent(false);
  plugin = await startPlugin();
  scheduling = new Scheduler({ client, naming: namingFor() }).run(abort.signal);
});

after(async () => {
  if (skip) return;
  if (process.env["NODEAGENT_TEST_LOGS"]) console.error(logs.join("\n"));
  abort.abort();
  await scheduling;
  await agent?.stop();
  plugin?.forceShutdown();
  client?.close();
  await server?.close();
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

const devicePod = (name: string): Pod => ({
  apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [{
      name: "main", image: "busybox",
      command: ["sh", "-c", "echo DEV=$VENDOR_DEVICE; cat /vendor/id; ls /dev/vendor0; sleep 3600"],
      resources: { requests: { [RESOURCE]: "1" }, limits: { [RESOURCE]: "1" } },
    }],
  },
} as Pod);

/** The container's log (upstream's <pod-logs-dir>/<ns>_<name>_<uid>/<container>/<n>.log). */
function logOf(pod: Pod): string {
  const dir = join(root, "logs", `default_${pod.metadata.name}_${pod.metadata.uid}`, "main");
  if (!existsSync(dir)) return "";
  return readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8")).join("");
}

const node = () => client.get<Node>(NODES, { name: NODE });

test("registration: wrong version and a native resource name are refused with upstream's messages", { skip }, async () => {
  assert.match((await register({ ...vendorRequest, version: "v1alpha1" })) ?? "", /version "v1alpha1" is not supported/);
  assert.equal(await register({ ...vendorRequest, resourceName: "orch.io/gpu" }), "invalid name of device plugin socket: orch.io/gpu");
  assert.equal(await register({ ...vendorRequest, resourceName: "nodomain" }), "invalid name of device plugin socket: nodomain");
  assert.match((await register({ ...vendorRequest, endpoint: "../elsewhere.sock" })) ?? "", /must be a socket file name/);
  assert.match((await register({ ...vendorRequest, endpoint: "missing.sock" })) ?? "", /does not exist/);
  assert.equal((await node()).status?.capacity?.[RESOURCE], undefined, "nothing registered yet");
});

test("two devices: capacity and allocatable; two pods get distinct devices, a third is Pending (Insufficient vendor/device); a restart keeps the allocations", { skip }, async () => {
  assert.equal(await register(vendorRequest), undefined);
  await eventually(async () => ((await node()).status?.allocatable?.[RESOURCE] === "2" ? true : undefined), 15_000, "allocatable vendor/device 2");
  assert.equal((await node()).status?.capacity?.[RESOURCE], "2");

  const created: Pod[] = [];
  for (const name of ["dev1", "dev2"]) created.push(await client.create<Pod>(PODS, devicePod(name)));
  const seen = new Map<string, string>();
  for (const p of created) {
    const out = await eventually(() => (/DEV=(dev-[ab])\n/.test(logOf(p)) && logOf(p).includes("/dev/vendor0") ? logOf(p) : undefined), 60_000, `${p.metadata.name}'s device in its env`);
    const dev = /DEV=(dev-[ab])\n/.exec(out)![1]!;
    assert.ok(out.includes(` F ${dev}\n`), `the plugin's mount of ${dev}: ${out}`);
    assert.ok(out.includes("/dev/vendor0"), `the device node: ${out}`);
    seen.set(p.metadata.name!, dev);
  }
  assert.deepEqual([...seen.values()].sort(), ["dev-a", "dev-b"], "distinct devices");
  assert.deepEqual(preStarts.map((ids) => ids.join()).sort(), ["dev-a", "dev-b"], "PreStartContainer for each");

  const third = await client.create<Pod>(PODS, devicePod("dev3"));
  const pending = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: "dev3" });
    return p.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False") ? p : undefined;
  }, 20_000, "dev3 unschedulable");
  const cond = pending.status!.conditions!.find((c) => c.type === "PodScheduled")!;
  assert.equal(cond.reason, "Unschedulable");
  assert.match(cond.message ?? "", /Insufficient vendor\/device/);
  assert.equal(pending.spec?.nodeName ?? "", "");

  // The checkpoint holds both allocations.
  const ckpt = () => JSON.parse(readFileSync(join(pluginDir(), "nodeagent_internal_checkpoint"), "utf8")) as { Data: { PodDeviceEntries: { PodUID: string; DeviceIDs: Record<string, string[]> }[] } };
  const held = (doc: ReturnType<typeof ckpt>) => Object.fromEntries(doc.Data.PodDeviceEntries.map((e) => [e.PodUID, Object.values(e.DeviceIDs).flat().join()]));
  const before = held(ckpt());
  assert.deepEqual(Object.values(before).sort(), ["dev-a", "dev-b"]);

  // Restart: the containers keep running (re-adopted), the allocations are read back, the plugin registers again.
  await agent.stop();
  agent = await startAgent(true);
  assert.deepEqual(held(ckpt()), before, "the checkpoint survives the restart");
  assert.equal(await register(vendorRequest), undefined);
  await eventually(async () => ((await node()).status?.allocatable?.[RESOURCE] === "2" ? true : undefined), 15_000, "allocatable again after the restart");
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await client.get<Pod>(PODS, { namespace: "default", name: "dev3" })).spec?.nodeName ?? "", "", "still no free device after the restart");

  // dev1 goes: its device is free again and dev3 gets exactly that one.
  await client.delete(PODS, { namespace: "default", name: "dev1" });
  const running = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: "dev3" });
    return /DEV=dev-[ab]\n/.test(logOf(p)) ? p : undefined;
  }, 60_000, "dev3 scheduled and running once dev1 is gone");
  assert.equal(/DEV=(dev-[ab])\n/.exec(logOf(running))![1], seen.get("dev1"), "dev3 has the device dev1 released");
  assert.equal(third.metadata.uid, running.metadata.uid);
  assert.equal(held(ckpt())[created[1]!.metadata.uid!], seen.get("dev2"), "dev2 keeps its device");
});

const boundPod = (name: string, n: number): Pod => {
  const p = devicePod(name);
  p.spec!.nodeName = NODE;
  p.spec!.containers![0]!.resources = { requests: { [RESOURCE]: String(n) }, limits: { [RESOURCE]: String(n) } };
  return p;
};
const failedOrRunning = (name: string) => eventually(async () => {
  const p = await client.get<Pod>(PODS, { namespace: "default", name });
  return p.status?.phase === "Failed" || /DEV=dev-[ab]\n/.test(logOf(p)) ? p : undefined;
}, 60_000, `${name} failed or running`);

test("devices are allocated at admission: a pod bound to the node asking for more than are free fails with UnexpectedAdmissionError and upstream's message; of two racing for the last device one gets it", { skip }, async () => {
  // dev2 and dev3 hold both devices now.
  const direct = await client.create<Pod>(PODS, boundPod("direct", 2));
  const failed = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: "direct" });
    return p.status?.phase === "Failed" ? p : undefined;
  }, 30_000, "direct failed");
  assert.equal(failed.status?.reason, "UnexpectedAdmissionError");
  assert.equal(failed.status?.message, `Pod was rejected: Allocate failed due to requested number of devices unavailable for ${RESOURCE}. Requested: 2, Available: 0, which is unexpected`);
  assert.equal(logOf(direct), "", "no container ran");
  const ckpt = JSON.parse(readFileSync(join(pluginDir(), "nodeagent_internal_checkpoint"), "utf8")) as { Data: { PodDeviceEntries: { PodUID: string }[] } };
  assert.ok(!ckpt.Data.PodDeviceEntries.some((e) => e.PodUID === direct.metadata.uid), "nothing held for the rejected pod");

  // One device freed; two bound pods ask for it at once.
  await client.delete(PODS, { namespace: "default", name: "dev2" });
  await eventually(async () => (await client.get<Pod>(PODS, { namespace: "default", name: "dev2" }).then(() => undefined, () => true)), 30_000, "dev2 gone");
  await Promise.all(["race1", "race2"].map((n) => client.create<Pod>(PODS, boundPod(n, 1))));
  const results = await Promise.all(["race1", "race2"].map(failedOrRunning));
  const lost = results.filter((p) => p.status?.phase === "Failed");
  assert.equal(lost.length, 1, results.map((p) => `${p.metadata.name}: ${p.status?.phase} ${p.status?.message ?? ""}`).join("; "));
  assert.equal(lost[0]!.status?.reason, "UnexpectedAdmissionError");
  assert.match(lost[0]!.status?.message ?? "", /Requested: 1, Available: 0, which is unexpected$/);
});
