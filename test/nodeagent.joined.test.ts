// The node agent joined to a real in-process API server (real store, real TLS)
// on the embedded runtime: Node registration and status, the lease, a pod
// bound to the node reaching Running as a watch sees it, its status fields,
// admission failures, graceful deletion ending in the agent's final delete,
// a static pod's mirror pod, a slow startup probe, and the agent's Events as
// kubectl 1.33 lists them.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../src/api/index.js";
import type { Event, Node, Pod } from "../src/api/core/types.js";
import type { Lease } from "../src/api/coordination/types.js";
import { startTestServer, type TestServer } from "../src/apiserver/testing/harness.js";
import { RestClient, leaseResource, loadKubeconfig, type WatchEvent } from "../src/client/index.js";
import { defaultConfig } from "../src/nodeagent/config/index.js";
import { startNodeAgent, type NodeAgent } from "../src/nodeagent/index.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";

const PODS = { group: "", version: "v1", resource: "pods", namespaced: true };
const NODES = { group: "", version: "v1", resource: "nodes", namespaced: false };
const NAMESPACES = { group: "", version: "v1", resource: "namespaces", namespaced: false };
const CONFIGMAPS = { group: "", version: "v1", resource: "configmaps", namespaced: true };
const EVENTS = { group: "", version: "v1", resource: "events", namespaced: true };
const NODE = "node-joined";
const rootSkip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's namespaces)" : undefined;

let server: TestServer;
let client: RestClient;
let agent: NodeAgent;
let root: string;
const logs: string[] = [];

before(async () => {
  if (rootSkip) return;
  root = mkdtempSync(join(tmpdir(), "nodeagent-joined-"));
  mkdirSync(join(root, "manifests"));
  writeFileSync(join(root, "manifests", "static.yaml"), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-web\n  namespace: default\nspec:\n  containers:\n  - name: main\n    image: busybox\n    command: [sleep, '3600']\n  terminationGracePeriodSeconds: 1\n");
  server = await startTestServer({ modules: builtinModules() });
  client = new RestClient(loadKubeconfig(server.server.kubeconfigPath));
  for (const name of ["default", "orch-node-lease"]) await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } }).catch(() => {});
  agent = await startNodeAgent({
    stopContainersOnExit: true, // a test leaves no container behind
    client,
    nodeName: NODE,
    config: { ...defaultConfig(), staticPodPath: join(root, "manifests"), maxPods: 5, nodeStatusUpdateFrequency: 500 },
    rootDir: join(root, "agent"),
    podLogsDir: join(root, "logs"),
    tuning: { plegPeriodMs: 200, housekeepingMs: 300, leaseRenewIntervalMs: 500 },
    log: (l) => logs.push(l),
  });
});

after(async () => {
  if (rootSkip) return;
  if (process.env["NODEAGENT_TEST_LOGS"]) console.error(logs.join("\n"));
  await agent?.stop();
  client?.close();
  await server?.close();
  // A container shim still finishing its files may race the removal: retry (ENOTEMPTY) rather than fail.
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

test("joined: the Node is registered with labels, addresses, capacity, info and the five conditions; the lease is renewed", { skip: rootSkip }, async () => {
  const node = await eventually(async () => {
    const n = await client.get<Node>(NODES, { name: NODE });
    return n.status?.conditions?.find((c) => c.type === "Ready")?.status === "True" ? n : undefined;
  }, 10_000, "the node to be Ready");
  assert.deepEqual(
    ["orch.io/hostname", "orch.io/os", "orch.io/arch"].map((k) => k in (node.metadata.labels ?? {})),
    [true, true, true],
  );
  assert.equal(node.metadata.labels?.["orch.io/os"], "linux");
  // A node named apart from its host (a second node on one machine) is told apart by its hostname label.
  assert.equal(node.metadata.labels?.["orch.io/hostname"], NODE);
  assert.deepEqual(node.status?.addresses?.map((a) => a.type).filter((t) => t !== "ExternalIP"), ["InternalIP", "Hostname"]);
  assert.deepEqual(Object.keys(node.status?.capacity ?? {}).sort(), ["cpu", "ephemeral-storage", "memory", "pods"]);
  assert.equal(node.status?.capacity?.["pods"], "5");
  assert.ok(node.status?.allocatable?.["memory"]);
  assert.deepEqual(node.status?.conditions?.map((c) => [c.type, c.status]), [["MemoryPressure", "False"], ["DiskPressure", "False"], ["PIDPressure", "False"], ["NetworkUnavailable", "False"], ["Ready", "True"]]);
  assert.equal(node.status?.conditions?.find((c) => c.type === "Ready")?.reason, "NodeAgentReady");
  assert.match(String(node.status?.nodeInfo?.containerRuntimeVersion), /^orch-embedded:\/\//);
  assert.equal(node.status?.nodeInfo?.["operatingSystem"], "linux");

  const lease = await eventually(() => client.get<Lease>(leaseResource(), { namespace: "orch-node-lease", name: NODE }), 5_000, "the lease");
  assert.equal(lease.spec?.holderIdentity, NODE);
  assert.equal(lease.spec?.leaseDurationSeconds, 40);
  assert.equal(lease.metadata.ownerReferences?.[0]?.kind, "Node");
  const renewed = await eventually(async () => {
    const l = await client.get<Lease>(leaseResource(), { namespace: "orch-node-lease", name: NODE });
    return l.spec?.renewTime !== lease.spec?.renewTime ? l : undefined;
  }, 5_000, "a renewal");
  assert.ok(Date.parse(renewed.spec!.renewTime!) > Date.parse(lease.spec!.renewTime!));
});

test("joined: a pod bound to the node runs (seen through a watch) with its status, then terminates gracefully and is deleted", { skip: rootSkip }, async () => {
  await client.create(CONFIGMAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "default" }, data: { greeting: "hello" } });
  const watch = await client.watch<Pod>(PODS, { namespace: "default", fieldSelector: "metadata.name=web" });
  const events: WatchEvent<Pod>[] = [];
  const pump = (async () => { for await (const e of watch) events.push(e); })();
  const created = await client.create<Pod>(PODS, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default" },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 2,
      volumes: [{ name: "conf", configMap: { name: "settings" } }],
      containers: [{
        name: "main",
        image: "busybox",
        command: ["sh", "-c", "echo $GREETING; cat /etc/settings/greeting; exec sleep 3600"],
        env: [{ name: "GREETING", valueFrom: { configMapKeyRef: { name: "settings", key: "greeting" } } }],
        volumeMounts: [{ name: "conf", mountPath: "/etc/settings" }],
        readinessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
      }],
    },
  });
  const running = await eventually(() => events.find((e) => e.object.status?.phase === "Running" && e.object.status.conditions?.find((c) => c.type === "Ready")?.status === "True")?.object, 20_000, "Running and Ready through the watch");
  const s = running.status!;
  assert.deepEqual(s.conditions?.map((c) => [c.type, c.status]).sort(), [["ContainersReady", "True"], ["Initialized", "True"], ["PodScheduled", "True"], ["Ready", "True"]]);
  const cs = s.containerStatuses![0]!;
  assert.ok(cs.state?.running?.startedAt);
  assert.deepEqual([cs.name, cs.ready, cs.started, cs.restartCount, cs.image], ["main", true, true, 0, "busybox"]);
  assert.match(String((cs as { containerID?: string }).containerID), /^orch-embedded:\/\/[0-9a-f]+$/);
  assert.ok(s.hostIP && s.podIP && s.startTime);

  // Graceful deletion: the agent stops the container, then deletes the pod with grace 0.
  await client.delete(PODS, { namespace: "default", name: "web", gracePeriodSeconds: 2 });
  await eventually(() => events.find((e) => e.type === "DELETED" && e.object.metadata.uid === created.metadata.uid), 20_000, "the pod to be deleted by the agent");
  watch.close();
  await pump;
});

test("joined: a pod that does not fit fails with OutOfcpu", { skip: rootSkip }, async () => {
  await client.create<Pod>(PODS, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "huge", namespace: "default" },
    spec: { nodeName: NODE, containers: [{ name: "c", image: "busybox", command: ["sleep", "1"], resources: { requests: { cpu: "100000" } } }] },
  });
  const failed = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: "huge" });
    return p.status?.phase === "Failed" ? p : undefined;
  }, 10_000, "the rejection");
  assert.equal(failed.status?.reason, "OutOfcpu");
  assert.match(String(failed.status?.message), /Node didn't have enough resource: cpu, requested: 100000000m/);
});

test("joined: a static pod gets a mirror pod in the API showing its status", { skip: rootSkip }, async () => {
  const mirror = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: `static-web-${NODE}` }).catch(() => undefined);
    return p?.status?.phase === "Running" ? p : undefined;
  }, 20_000, "the mirror pod to be Running");
  assert.ok(mirror.metadata.annotations?.["orch.io/config.mirror"]);
  assert.equal(mirror.spec?.nodeName, NODE);
});

test("joined: lifecycle hooks: postStart has run when the pod is Running, preStop runs before the stop; a failing postStart kills the container", { skip: rootSkip }, async () => {
  const dir = mkdtempSync(join(root, "hooks-"));
  const hostVolume = { name: "host", hostPath: { path: dir } };
  await client.create<Pod>(PODS, {
    apiVersion: "v1", kind: "Pod", metadata: { name: "hooks", namespace: "default" },
    spec: {
      nodeName: NODE, terminationGracePeriodSeconds: 3, volumes: [hostVolume],
      containers: [{
        name: "main", image: "busybox", command: ["sleep", "3600"], volumeMounts: [{ name: "host", mountPath: "/host" }],
        lifecycle: { postStart: { exec: { command: ["sh", "-c", "echo started > /host/post-start"] } }, preStop: { exec: { command: ["sh", "-c", "echo stopping > /host/pre-stop"] } } },
      }],
    },
  });
  await eventually(async () => (await client.get<Pod>(PODS, { namespace: "default", name: "hooks" })).status?.phase === "Running" || undefined, 20_000, "hooks Running");
  assert.equal(readFileSync(join(dir, "post-start"), "utf8"), "started\n");
  assert.equal(existsSync(join(dir, "pre-stop")), false);
  await client.delete(PODS, { namespace: "default", name: "hooks", gracePeriodSeconds: 3 });
  await eventually(async () => (await client.get<Pod>(PODS, { namespace: "default", name: "hooks" }).catch(() => undefined)) === undefined || undefined, 20_000, "hooks deleted");
  assert.equal(readFileSync(join(dir, "pre-stop"), "utf8"), "stopping\n");

  await client.create<Pod>(PODS, {
    apiVersion: "v1", kind: "Pod", metadata: { name: "hook-fails", namespace: "default" },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 0, containers: [{ name: "main", image: "busybox", command: ["sleep", "3600"], lifecycle: { postStart: { exec: { command: ["sh", "-c", "exit 7"] } } } }] },
  });
  const restarted = await eventually(async () => {
    const s = (await client.get<Pod>(PODS, { namespace: "default", name: "hook-fails" })).status?.containerStatuses?.[0];
    return (s?.restartCount ?? 0) >= 1 && s?.lastState?.terminated ? s : undefined;
  }, 20_000, "the container killed after its postStart hook failed, then restarted");
  assert.equal(restarted.ready, false);
  assert.ok(logs.some((l) => l.startsWith(`FailedPostStartHook: Exec lifecycle hook (["sh","-c","exit 7"]) for Container "main" in Pod "hook-fails_default(`)), "the failure is logged");
  await client.delete(PODS, { namespace: "default", name: "hook-fails", gracePeriodSeconds: 0 });
});

test("joined: a sidecar starts before the container, is restarted when it exits, and the pod succeeds when the container does", { skip: rootSkip }, async () => {
  const dir = mkdtempSync(join(root, "sidecar-"));
  const mount = [{ name: "host", mountPath: "/host" }];
  await client.create<Pod>(PODS, {
    apiVersion: "v1", kind: "Pod", metadata: { name: "with-sidecar", namespace: "default" },
    spec: {
      nodeName: NODE, restartPolicy: "Never", terminationGracePeriodSeconds: 0, volumes: [{ name: "host", hostPath: { path: dir } }],
      // The sidecar exits after a second (restarted at once: the first restart has no back-off); the container
      // fails unless the sidecar ran before it.
      initContainers: [{ name: "shipper", image: "busybox", restartPolicy: "Always", command: ["sh", "-c", "echo up >> /host/sidecar; sleep 1; exit 1"], volumeMounts: mount }],
      containers: [{ name: "main", image: "busybox", command: ["sh", "-c", "test -f /host/sidecar && sleep 4"], volumeMounts: mount }],
    },
  });
  const running = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: "with-sidecar" });
    return p.status?.phase === "Running" ? p : undefined;
  }, 20_000, "Running with its sidecar");
  assert.equal(running.status?.conditions?.find((c) => c.type === "Initialized")?.status, "True");
  assert.equal(running.status?.initContainerStatuses?.[0]?.name, "shipper");
  const done = await eventually(async () => {
    const p = await client.get<Pod>(PODS, { namespace: "default", name: "with-sidecar" });
    return p.status?.phase === "Succeeded" ? p : undefined;
  }, 20_000, "Succeeded");
  assert.equal(done.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  assert.ok((done.status?.initContainerStatuses?.[0]?.restartCount ?? 0) >= 1, "the sidecar was restarted");
  assert.ok(readFileSync(join(dir, "sidecar"), "utf8").split("\n").filter(Boolean).length >= 2);
  await client.delete(PODS, { namespace: "default", name: "with-sidecar", gracePeriodSeconds: 0 });
});

test("joined: termination messages (file, non-root at a custom path, log tail on failure) and pod sysctls reach the pod's status", { skip: rootSkip }, async () => {
  const run = async (name: string, container: Record<string, unknown>, sysctls?: { name: string; value: string }[]) => {
    await client.create<Pod>(PODS, {
      apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" },
      spec: { nodeName: NODE, restartPolicy: "Never", terminationGracePeriodSeconds: 0, ...(sysctls ? { securityContext: { sysctls } } : {}), containers: [{ name: "main", image: "busybox", ...container }] },
    });
    const p = await eventually(async () => {
      const got = await client.get<Pod>(PODS, { namespace: "default", name });
      return got.status?.phase === "Succeeded" || got.status?.phase === "Failed" ? got : undefined;
    }, 20_000, `${name} to finish`);
    await client.delete(PODS, { namespace: "default", name, gracePeriodSeconds: 0 });
    return p.status?.containerStatuses?.[0]?.state?.terminated;
  };
  const fromFile = await run("term-file", { command: ["sh", "-c", "printf OK > /dev/termination-log"], terminationMessagePolicy: "FallbackToLogsOnError" });
  // The runtime's own message (here the host-root note: busybox is not imported) comes first, as upstream's "<runtime>: <message>".
  const own = (t: typeof fromFile) => [t?.exitCode, t?.message?.replace(/^image "busybox" is not in the embedded runtime's image store: the command runs on the host's root file system(: |$)/, "")];
  assert.deepEqual(own(fromFile), [0, "OK"]);
  const custom = await run("term-custom", { command: ["sh", "-c", "printf DONE > /dev/termination-custom-log"], terminationMessagePath: "/dev/termination-custom-log", securityContext: { runAsUser: 1000 } });
  assert.deepEqual(own(custom), [0, "DONE"]);
  const fromLog = await run("term-log", { command: ["sh", "-c", "printf DONE; exit 3"], terminationMessagePolicy: "FallbackToLogsOnError" });
  assert.deepEqual(own(fromLog), [3, "DONE"]);
  const none = await run("term-none", { command: ["sh", "-c", "echo not a message; exit 1"] });
  assert.ok(!(none?.message ?? "").includes("not a message"), "File policy: the log is not the message");
  assert.equal(none?.exitCode, 1);
  const sysctl = await run("sysctl", { command: ["sh", "-c", "cat /proc/sys/kernel/shm_rmid_forced > /dev/termination-log"] }, [{ name: "kernel.shm_rmid_forced", value: "1" }]);
  assert.deepEqual(own(sysctl), [0, "1\n"]);
});

test("joined: a startup tcpSocket probe (periodSeconds 1, failureThreshold 30) on a container that listens after 3 s: started, ready, never restarted", { skip: rootSkip }, async () => {
  // The audit's case. The image is absent, so the embedded runtime runs the command on the host's root file
  // system, where this test's own node binary listens in the pod's network namespace.
  const listen = `setTimeout(() => require("net").createServer((s) => s.destroy()).listen(8080), 3000)`;
  await client.create<Pod>(PODS, {
    apiVersion: "v1", kind: "Pod", metadata: { name: "slow-start", namespace: "default" },
    spec: {
      nodeName: NODE, terminationGracePeriodSeconds: 0,
      containers: [{
        name: "main", image: "busybox", command: [process.execPath, "-e", listen],
        startupProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1, failureThreshold: 30 },
        readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
      }],
    },
  });
  const ready = await eventually(async () => {
    const s = (await client.get<Pod>(PODS, { namespace: "default", name: "slow-start" })).status?.containerStatuses?.[0];
    return s?.ready ? s : undefined;
  }, 20_000, "the container started and ready");
  assert.deepEqual([ready.started, ready.restartCount], [true, 0]);
  const events = await client.list<Event>(EVENTS, { namespace: "default", fieldSelector: "involvedObject.name=slow-start" });
  assert.ok(events.items.some((e) => e.reason === "Unhealthy" && e.message?.startsWith("Startup probe failed")), "the failed startup checks are reported");
  assert.ok(!events.items.some((e) => e.reason === "Killing"), "nothing was killed");
  assert.ok(events.items.some((e) => e.reason === "ImageNotPresent" && e.type === "Warning"), "running on the host's root file system is reported");
  await deleteAndWait("slow-start");
});

test("joined: kubectl get events lists the agent's Created/Started, and Unhealthy + Killing for a failing liveness probe", { skip: rootSkip ?? kubectlSkipReason() }, async () => {
  await client.create<Pod>(PODS, {
    apiVersion: "v1", kind: "Pod", metadata: { name: "sick", namespace: "default" },
    spec: {
      nodeName: NODE, terminationGracePeriodSeconds: 0,
      containers: [{ name: "main", image: "busybox", command: ["sleep", "3600"], livenessProbe: { exec: { command: ["sh", "-c", "echo no pulse; exit 1"] }, periodSeconds: 1, failureThreshold: 2 } }],
    },
  });
  const kubectl = new Kubectl(server.server.kubeconfigPath);
  const out = await eventually(async () => {
    const o = await kubectl.ok("get", "events", "-n", "default", "--field-selector", "involvedObject.name=sick");
    return /Killing/.test(o) ? o : undefined;
  }, 20_000, "a Killing event");
  assert.match(out, /Normal\s+Created\s+pod\/sick\s+Created container: main/);
  assert.match(out, /Normal\s+Started\s+pod\/sick\s+Started container main/);
  assert.match(out, /Warning\s+Unhealthy\s+pod\/sick\s+Liveness probe failed: no pulse/);
  assert.match(out, /Normal\s+Killing\s+pod\/sick\s+Container main failed liveness probe, will be restarted/);
  const described = await kubectl.ok("describe", "pod", "sick");
  assert.match(described, /Warning\s+Unhealthy\s+.+?\s+nodeagent\s+Liveness probe failed: no pulse/, "kubectl describe lists them with their source");
  const events = await client.list<Event>(EVENTS, { namespace: "default", fieldSelector: "involvedObject.name=sick,reason=Started" });
  const started = events.items[0]!;
  assert.deepEqual([started.involvedObject?.fieldPath, started.source?.component, started.source?.host, started.reportingComponent], ["spec.containers{main}", "nodeagent", NODE, "nodeagent"]);
  await deleteAndWait("sick");
});

/** Deletes a pod and waits for the agent to have stopped it and removed it from the API (nothing of it still running at after()). */
async function deleteAndWait(name: string): Promise<void> {
  await client.delete(PODS, { namespace: "default", name, gracePeriodSeconds: 0 });
  await eventually(async () => (await client.get<Pod>(PODS, { namespace: "default", name }).catch(() => undefined)) === undefined || undefined, 20_000, `${name} deleted`);
}
