// End to end: `orch simulate-nodes --count 20` (the real command, a child
// process) against `orch server` without a node agent (API server, controller
// manager, scheduler): the 20 Nodes register Ready with their labels, a
// Deployment of 100 pods goes Running on them (addresses from each node's
// /24, containers ready), the node leases are renewed, and scaling to 0
// deletes every pod (the simulator finishes the graceful deletes). Also the
// command's refusals of bad input (exit 2), and the k8s.io naming profile.
// Not timed: the waits are generous for a shared machine.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RestClient, loadKubeconfig } from "../src/client/index.js";
import type { Node, Pod } from "../src/api/core/types.js";
import type { Lease } from "../src/api/coordination/types.js";
import { DEPLOYMENTS, NODES, PODS, leaseResource } from "../src/api/resource-refs.js";
import { namingFor } from "../src/machinery/naming.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { startSimulator, type Simulator } from "./support/simulator.js";
import { startUpstream } from "../bench/support/upstream-apiserver.js";
import { etcdSkipReason, startEtcd, type EtcdServer } from "../src/storage/etcd/testing/etcd-server.js";
import { existsSync } from "node:fs";

const BIN = fileURLToPath(new URL("../../bin/orch.js", import.meta.url));

function deployment(replicas: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "sim", namespace: "default" },
    spec: {
      replicas,
      selector: { matchLabels: { app: "sim" } },
      template: { metadata: { labels: { app: "sim" } }, spec: { containers: [{ name: "main", image: "nginx:1.27", resources: { requests: { cpu: "100m", memory: "64Mi" } } }] } },
    },
  };
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

describe("orch simulate-nodes", () => {
  let orch: OrchProcess;
  let client: RestClient;
  let sim: Simulator;

  before(async () => {
    orch = await startOrch("server", ["--disable-agent", "--disable-dns"]);
    client = new RestClient(loadKubeconfig(orch.kubeconfig));
    sim = await startSimulator(["--count", "20", "--kubeconfig", orch.kubeconfig, "--name-prefix", "sim-"]);
  });

  after(async () => {
    await sim?.stop();
    client?.close();
    await orch?.stop();
  });

  test("20 nodes register Ready, with the naming table's labels, capacity and a pod range each", async () => {
    const nodes = (await client.list<Node>(NODES)).items.filter((n) => n.metadata.name!.startsWith("sim-"));
    assert.equal(nodes.length, 20);
    const cidrs = new Set<string>();
    for (const n of nodes) {
      assert.equal(n.metadata.labels?.["orch.io/hostname"], n.metadata.name);
      assert.equal(n.metadata.labels?.["orch.io/os"], "linux");
      assert.equal(n.status?.capacity?.["pods"], "110");
      assert.equal(n.status?.allocatable?.["cpu"], "32");
      assert.equal(n.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
      assert.ok(n.status?.addresses?.some((a) => a.type === "InternalIP"));
      cidrs.add(n.spec!.podCIDR!);
    }
    assert.equal(cidrs.size, 20, "every node has a pod range of its own");
  });

  test("a Deployment of 100 pods runs on the simulated nodes; leases are renewed; scaling to 0 deletes every pod", async () => {
    const naming = namingFor();
    const leases = leaseResource(naming);
    const first = new Map<string, string>();
    const initial = await until("20 node leases", 30_000, async () => {
      const l = (await client.list<Lease>(leases, { namespace: naming.nodeLeaseNamespace })).items.filter((x) => x.metadata.name!.startsWith("sim-"));
      return l.length === 20 ? l : undefined;
    });
    for (const l of initial) first.set(l.metadata.name!, l.spec!.renewTime!);

    await client.create(DEPLOYMENTS, deployment(100));
    const running = await until("100 pods Running", 180_000, async () => {
      const pods = (await client.list<Pod>(PODS, { namespace: "default", labelSelector: "app=sim" })).items;
      const ok = pods.filter((p) => p.status?.phase === "Running");
      return pods.length === 100 && ok.length === 100 ? pods : undefined;
    });
    const nodes = new Map((await client.list<Node>(NODES)).items.map((n) => [n.metadata.name!, n]));
    const ips = new Set<string>();
    for (const p of running) {
      const node = nodes.get(p.spec!.nodeName!);
      assert.ok(node && p.spec!.nodeName!.startsWith("sim-"), `pod ${p.metadata.name} on a simulated node (${p.spec!.nodeName})`);
      const prefix = node.spec!.podCIDR!.replace(/\.0\/24$/, ".");
      assert.ok(p.status!.podIP!.startsWith(prefix), `pod IP ${p.status!.podIP} in ${node.spec!.podCIDR}`);
      assert.equal(p.status!.hostIP, node.status!.addresses!.find((a) => a.type === "InternalIP")!.address);
      ips.add(p.status!.podIP!);
      assert.equal(p.status!.containerStatuses?.[0]?.ready, true);
      assert.ok(p.status!.containerStatuses?.[0]?.state?.running?.startedAt);
      assert.equal(p.status!.conditions?.find((c) => c.type === "Ready")?.status, "True");
    }
    assert.equal(ips.size, 100, "pod addresses are unique");
    assert.ok(new Set(running.map((p) => p.spec!.nodeName)).size > 1, "pods spread over several nodes");
    await until("the Deployment's 100 ready replicas", 60_000, async () => {
      const d = await client.get<{ status?: { readyReplicas?: number } } & Pod>(DEPLOYMENTS, { namespace: "default", name: "sim" });
      return d.status?.readyReplicas === 100 ? true : undefined;
    });

    // Every lease renewed since first seen (renewals every 10 s, jittered).
    await until("every lease renewed", 40_000, async () => {
      const l = (await client.list<Lease>(leases, { namespace: naming.nodeLeaseNamespace })).items.filter((x) => x.metadata.name!.startsWith("sim-"));
      return l.length === 20 && l.every((x) => Date.parse(x.spec!.renewTime!) > Date.parse(first.get(x.metadata.name!)!)) ? true : undefined;
    });
    // The node controller sees them alive: still Ready, no unreachable taint.
    for (const n of (await client.list<Node>(NODES)).items.filter((x) => x.metadata.name!.startsWith("sim-"))) {
      assert.equal(n.status?.conditions?.find((c) => c.type === "Ready")?.status, "True", `${n.metadata.name} Ready`);
      assert.ok(!(n.spec?.taints ?? []).some((t) => t.key?.endsWith("/unreachable")), `${n.metadata.name} not tainted unreachable`);
    }

    await client.patch(DEPLOYMENTS, { namespace: "default", name: "sim", patch: { spec: { replicas: 0 } } });
    await until("every pod deleted", 180_000, async () => {
      const pods = (await client.list<Pod>(PODS, { namespace: "default", labelSelector: "app=sim" })).items;
      return pods.length === 0 ? true : undefined;
    });
    assert.doesNotMatch(sim.output(), /failed|could not/i);
  });
});

const UPSTREAM = process.env["KUBE_APISERVER_BIN"] ?? "/work/upstream/bin/kube-apiserver";
const upstreamSkip = etcdSkipReason() ?? (existsSync(UPSTREAM) ? undefined : `no upstream kube-apiserver at ${UPSTREAM} (set KUBE_APISERVER_BIN)`);

describe("orch simulate-nodes against upstream's kube-apiserver (k8s.io names), with stages", { skip: upstreamSkip }, () => {
  let etcd: EtcdServer;
  let upstream: OrchProcess;
  let client: RestClient;
  let sim: Simulator;

  before(async () => {
    etcd = await startEtcd();
    upstream = await startUpstream(UPSTREAM, etcd.endpoints);
    client = new RestClient(loadKubeconfig(upstream.kubeconfig));
    const dir = mkdtempSync(join(tmpdir(), "sim-stages-"));
    writeFileSync(join(dir, "stages.yaml"), "podRunning: { delay: 300ms, jitter: 200ms }\npodDelete: { delay: 100ms }\n");
    sim = await startSimulator(["--count", "3", "--kubeconfig", upstream.kubeconfig, "--stages", join(dir, "stages.yaml")]);
  });

  after(async () => {
    await sim?.stop();
    client?.close();
    await upstream?.stop();
    await etcd?.stop();
  });

  test("nodes carry kubernetes.io labels and kube-node-lease leases; a pod goes Running, Succeeded by its annotation, and a graceful delete completes", async () => {
    const node = await client.get<Node>(NODES, { name: "sim-node-1" });
    assert.equal(node.metadata.labels?.["kubernetes.io/hostname"], "sim-node-1");
    assert.equal(node.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
    await until("the leases in kube-node-lease", 30_000, async () => {
      const l = (await client.list<Lease>(leaseResource(namingFor("k8s.io")), { namespace: "kube-node-lease" })).items;
      return l.length === 3 ? true : undefined;
    });
    const pod = (name: string, annotations: Record<string, string> = {}) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default", annotations },
      spec: { nodeName: "sim-node-1", restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] },
    });
    await client.create(PODS, pod("job", { "simulate-nodes.orch.io/succeed-after": "1s" }));
    await client.create(PODS, pod("web"));
    const job = await until("the annotated pod Succeeded", 60_000, async () => {
      const p = await client.get<Pod>(PODS, { namespace: "default", name: "job" });
      return p.status?.phase === "Succeeded" ? p : undefined;
    });
    assert.equal(job.status?.containerStatuses?.[0]?.state?.terminated?.reason, "Completed");
    const web = await until("the other pod Running", 60_000, async () => {
      const p = await client.get<Pod>(PODS, { namespace: "default", name: "web" });
      return p.status?.phase === "Running" ? p : undefined;
    });
    assert.match(web.status!.podIP!, /^10\.128\.1\.\d+$/);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await client.get<Pod>(PODS, { namespace: "default", name: "web" })).status?.phase, "Running", "an unannotated pod keeps running");
    await client.delete(PODS, { namespace: "default", name: "web" }); // default grace: 30 s
    await until("the pod removed well before its 30 s grace", 15_000, async () => {
      try {
        await client.get<Pod>(PODS, { namespace: "default", name: "web" });
        return undefined;
      } catch (err) {
        return (err as { code?: number }).code === 404 ? true : undefined;
      }
    });
  });
});

describe("orch simulate-nodes: bad input", () => {
  const run = (args: string[]) => spawnSync(process.execPath, [BIN, "simulate-nodes", ...args], { encoding: "utf8", timeout: 30_000 });
  const dir = mkdtempSync(join(tmpdir(), "sim-flags-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\n");

  for (const [args, message] of [
    [["--kubeconfig", kubeconfig], /--count is required/],
    [["--count", "3"], /one of --kubeconfig or --server/],
    [["--count", "3", "--server", "https://127.0.0.1:1"], /--server needs --token/],
    [["--count", "3", "--server", "http://127.0.0.1:1", "--token", "t"], /must be an https:\/\/ URL/],
    [["--count", "3", "--kubeconfig", kubeconfig, "--server", "https://x", "--token", "t"], /mutually exclusive/],
    [["--count", "3", "--kubeconfig", kubeconfig, "--name-prefix", "Bad_"], /does not make valid node names/],
    [["--count", "3", "--kubeconfig", kubeconfig, "--node-pods", "300"], /--node-pods must be/],
    [["--count", "40000", "--kubeconfig", kubeconfig], /count/],
  ] as [string[], RegExp][]) {
    test(`exits 2: ${args.join(" ")}`, () => {
      const r = run(args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }

  test("exits 2 naming the field of a bad stages file", () => {
    const stages = join(dir, "stages.yaml");
    writeFileSync(stages, "podRunning: { delay: 5 }\n");
    let r = run(["--count", "3", "--kubeconfig", kubeconfig, "--stages", stages]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /podRunning\.delay: must be a duration string/);
    writeFileSync(stages, "podStarting: { delay: 1s }\n");
    r = run(["--count", "3", "--kubeconfig", kubeconfig, "--stages", stages]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /unknown stage "podStarting"/);
  });
});
