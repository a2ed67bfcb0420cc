// End to end: the resource metrics pipeline against a real `orch server`
// (embedded runtime, --metric-resolution=2s) with kubectl 1.33: the node
// agent's /stats/summary behind its port's access check, the API server
// scraping /metrics/resource into metrics.k8s.io, and `kubectl top nodes`,
// `kubectl top pods` (with a label selector and --containers) reading it; the
// Table of `kubectl get pods.metrics.k8s.io`, and the errors of the API.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { httpsGet } from "../src/component/testing/https-get.js";
import { issueClientCert } from "../src/component/pki.js";
import { commandSkipReason } from "../src/component/metrics/testing.js";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { hostIPv4, startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-metrics-"));
const TOKEN = suiteToken(810_000);

function pod(name: string, script: string, labels: Record<string, string>, limits = ""): string {
  const path = join(files, `${name}.yaml`);
  const l = Object.entries(labels).map(([k, v]) => `    ${k}: ${v}`).join("\n");
  writeFileSync(path, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  labels:\n${l}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox\n    command: [sh, -c, ${JSON.stringify(`${script} # ${TOKEN}`)}]\n${limits}`);
  return path;
}

/** Millicores of a kubectl top CPU cell ("250m", "1"). */
const millicores = (cell: string): number => (cell.endsWith("m") ? Number(cell.slice(0, -1)) : Number(cell) * 1000);

describe("resource metrics: kubectl top against orch server", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;

  before(async () => {
    // The node advertises a non-loopback address: nodes/proxy refuses loopback ones, as upstream's.
    const nodeIP = hostIPv4() ?? "127.0.0.1";
    orch = await startOrch("server", ["--node-name=metrics-main", "--metric-resolution=2s", "--horizontal-pod-autoscaler-sync-period=3s", `--node-ip=${nodeIP}`, `--nodeagent-bind-address=${nodeIP}`], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    // A busy loop held to 300m by its limit (cgroup CPU quota), and an idle pod.
    await k.ok("create", "-f", pod("burn", "while true; do :; done", { app: "burn" }, "    resources:\n      limits: {cpu: 300m, memory: 64Mi}\n"));
    await k.ok("create", "-f", pod("idle", `sleep ${TOKEN}`, { app: "idle" }, "    readinessProbe:\n      exec: {command: [\"true\"]}\n      periodSeconds: 1\n"));
    await k.ok("wait", "--for=condition=Ready", "pod/burn", "pod/idle", "--timeout=60s");
  });
  after(async () => {
    await orch?.stop();
    await killMatching(`# ${TOKEN}|sleep ${TOKEN}`);
  });

  test("discovery lists metrics.k8s.io/v1beta1 nodes and pods (get, list)", async () => {
    const out = await k.ok("api-resources", "--api-group=metrics.k8s.io", "-o", "wide");
    assert.match(out, /^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics\s+get,list/m);
    assert.match(out, /^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics\s+get,list/m);
  });

  test("kubectl top nodes: the node's CPU and memory", async () => {
    const out = await eventually("node metrics", async () => {
      const r = await k.run(["top", "nodes"]);
      return r.code === 0 && /metrics-main/.test(r.stdout) ? r.stdout : undefined;
    }, 30_000);
    assert.match(out, /^NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)\s*$/m);
    const row = out.split("\n").find((l) => l.startsWith("metrics-main"))!.trim().split(/\s+/);
    assert.ok(millicores(row[1]!) > 0, `node CPU ${row[1]}`);
    assert.match(row[3]!, /^\d+Mi$/);
  });

  test("kubectl top pods: the burning pod near its 300m limit, the idle one near 0; -l and --containers", async () => {
    const cpu = await eventually("the busy pod's CPU", async () => {
      const r = await k.run(["top", "pods"]);
      const row = r.stdout.split("\n").find((l) => l.startsWith("burn "))?.trim().split(/\s+/);
      return row !== undefined && millicores(row[1]!) >= 100 && /^idle /m.test(r.stdout) ? r.stdout : undefined;
    }, 40_000);
    const rows = new Map(cpu.split("\n").slice(1).filter(Boolean).map((l) => l.trim().split(/\s+/)).map((r) => [r[0]!, r]));
    assert.ok(millicores(rows.get("burn")![1]!) <= 400, `burn is held to its limit: ${rows.get("burn")![1]}`);
    assert.ok(millicores(rows.get("idle")![1]!) < 50, `idle: ${rows.get("idle")![1]}`);
    assert.match(rows.get("idle")![2]!, /^\d+Mi$/);
    const selected = await k.ok("top", "pods", "-l", "app=burn");
    assert.deepEqual(selected.split("\n").slice(1).filter(Boolean).map((l) => l.split(/\s+/)[0]), ["burn"]);
    const containers = await k.ok("top", "pod", "burn", "--containers");
    assert.match(containers, /^POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/m);
    assert.match(containers, /^burn\s+main\s+\d+m\s+\d+Mi/m);
  });

  test("the API: PodMetrics and NodeMetrics objects, the Table, 404, 400 and 405", async () => {
    const m = JSON.parse(await k.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burn")) as { kind: string; metadata: { labels: Record<string, string> }; window: string; timestamp: string; containers: { name: string; usage: { cpu: string; memory: string } }[] };
    assert.equal(m.kind, "PodMetrics");
    assert.deepEqual(m.metadata.labels, { app: "burn" });
    assert.match(m.window, /^\d+(\.\d+)?s$/);
    assert.match(m.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(m.containers.map((c) => c.name), ["main"]);
    assert.match(m.containers[0]!.usage.cpu, /^\d+n$/);
    assert.match(m.containers[0]!.usage.memory, /^\d+Ki$/);
    const list = JSON.parse(await k.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=orch.io/hostname")) as { kind: string; items: { metadata: { name: string } }[] };
    assert.deepEqual([list.kind, list.items.map((i) => i.metadata.name)], ["NodeMetricsList", ["metrics-main"]]);
    const none = JSON.parse(await k.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=nope%3Dnope")) as { items: unknown[] };
    assert.deepEqual(none.items, []);
    const table = await k.ok("get", "pods.metrics.k8s.io");
    assert.match(table, /^NAME\s+CPU\s+MEMORY\s+WINDOW\s*$/m);
    assert.match(table, /^burn\s+\d+n\s+\d+Ki\s+\d+(\.\d+)?s\s*$/m);
    const missing = await k.run(["get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope"]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /podmetrics\.metrics\.k8s\.io "nope" not found/);
    const badSelector = await k.run(["get", "--raw", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3D%3D%3Db"]);
    assert.match(badSelector.stderr, /BadRequest|unable to parse requirement|invalid/i);
    const post = await k.run(["create", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes", "-f", "-"], { input: "{}" });
    assert.match(post.stderr, /MethodNotAllowed|not supported|not allowed/i);
  });

  test("the agent's /stats/summary: 401 without credentials, 403 without nodes/stats, the summary for the API server's certificate and through nodes/proxy", async () => {
    const node = JSON.parse(await k.ok("get", "node", "metrics-main", "-o", "json")) as { status: { addresses: { type: string; address: string }[]; daemonEndpoints: { kubeletEndpoint: { Port: number } } } };
    const base = `https://${node.status.addresses.find((a) => a.type === "InternalIP")!.address}:${node.status.daemonEndpoints.kubeletEndpoint.Port}`;
    assert.equal((await httpsGet(`${base}/stats/summary`)).status, 401);
    const eve = await issueClientCert({ cert: readFileSync(join(orch.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(orch.dataDir, "ca.key"), "utf8") }, "eve");
    const denied = await httpsGet(`${base}/stats/summary`, { clientCert: eve });
    assert.deepEqual([denied.status, denied.text], [403, "Forbidden (user=eve, verb=get, resource=nodes, subresource=stats)\n"]);
    const clientCert = { cert: readFileSync(join(orch.dataDir, "apiserver-nodeagent-client.crt"), "utf8"), key: readFileSync(join(orch.dataDir, "apiserver-nodeagent-client.key"), "utf8") };
    const ok = await httpsGet(`${base}/stats/summary`, { clientCert });
    assert.equal(ok.status, 200);
    const summary = JSON.parse(ok.text) as { node: { nodeName: string }; pods: { podRef: { name: string } }[] };
    assert.equal(summary.node.nodeName, "metrics-main");
    assert.ok(summary.pods.some((p) => p.podRef.name === "burn"));
    const resource = await httpsGet(`${base}/metrics/resource`, { clientCert });
    assert.match(resource.text, /^pod_cpu_usage_seconds_total\{namespace="default",pod="burn"\} /m);
    // The same through the API server: nodes/proxy.
    const proxied = JSON.parse(await k.ok("get", "--raw", "/api/v1/nodes/metrics-main/proxy/stats/summary")) as typeof summary;
    assert.equal(proxied.node.nodeName, "metrics-main");
    assert.match(await k.ok("get", "--raw", "/api/v1/nodes/metrics-main/proxy/metrics/resource"), /^# TYPE node_cpu_usage_seconds_total counter$/m);
    const unknownNode = await k.run(["get", "--raw", "/api/v1/nodes/nope/proxy/stats/summary"]);
    assert.match(unknownNode.stderr, /nodes "nope" not found/);
    const post = await k.run(["create", "--raw", "/api/v1/nodes/metrics-main/proxy/stats/summary", "-f", "-"], { input: "{}" });
    assert.match(post.stderr, /MethodNotAllowed|not supported/i);
  });

  test("a real Prometheus scrapes the agent's /metrics/resource and /metrics/probes with the API server's client certificate", { skip: commandSkipReason("prometheus", "prometheus") ?? false }, async () => {
    const node = JSON.parse(await k.ok("get", "node", "metrics-main", "-o", "json")) as { status: { addresses: { type: string; address: string }[]; daemonEndpoints: { kubeletEndpoint: { Port: number } } } };
    const target = `${node.status.addresses.find((a) => a.type === "InternalIP")!.address}:${node.status.daemonEndpoints.kubeletEndpoint.Port}`;
    const dir = mkdtempSync(join(tmpdir(), "orch-prometheus-agent-"));
    const job = (name: string, path: string): string[] => [
      `  - job_name: ${name}`, "    scheme: https", `    metrics_path: ${path}`, "    tls_config:",
      `      cert_file: ${join(orch.dataDir, "apiserver-nodeagent-client.crt")}`, `      key_file: ${join(orch.dataDir, "apiserver-nodeagent-client.key")}`,
      // The agent's serving certificate is self-signed, as upstream's kubelet's by default.
      "      insecure_skip_verify: true", "    static_configs:", `      - targets: ["${target}"]`,
    ];
    writeFileSync(join(dir, "prometheus.yml"), ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s", "scrape_configs:", ...job("resource", "/metrics/resource"), ...job("probes", "/metrics/probes"), ""].join("\n"));
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    let log = "";
    const prometheus = spawn("prometheus", [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
    prometheus.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined);
      if (res === undefined || res.status !== 200) return []; // not listening (or not ready) yet
      const body = (await res.json()) as { status: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      return body.status === "success" ? body.data!.result : [];
    };
    try {
      const rate = await eventually("Prometheus to have two scrapes of the busy pod", async () => {
        const r = await query('rate(container_cpu_usage_seconds_total{job="resource",pod="burn",container="main"}[10s])');
        return r.length === 1 && Number(r[0]!.value[1]) > 0.05 ? r : undefined;
      }, 40_000).catch((err: Error) => { throw new Error(`${err.message}\n${log.slice(-2000)}`); });
      assert.equal(rate[0]!.metric["namespace"], "default");
      const up = await query("up");
      assert.deepEqual(up.map((r) => [r.metric["job"], r.value[1]]).sort(), [["probes", "1"], ["resource", "1"]]);
      assert.equal((await query('resource_scrape_error{job="resource"}'))[0]?.value[1], "0");
      const probes = await eventually("a probe count", async () => {
        const r = await query('prober_probe_total{job="probes",pod="idle",probe_type="Readiness",result="successful"}');
        return r.length === 1 && Number(r[0]!.value[1]) >= 1 ? r : undefined;
      }, 20_000);
      assert.equal(probes[0]!.metric["container"], "main");
      assert.ok((await query('prober_probe_duration_seconds_count{job="probes",pod="idle"}')).length === 1);
    } finally {
      const exited = new Promise<void>((r) => prometheus.once("exit", () => r()));
      prometheus.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    }
  });

  test("a HorizontalPodAutoscaler scales a custom kind through its scale subresource (issue 16)", async () => {
    writeFileSync(join(files, "scalers.yaml"), [
      "apiVersion: apiextensions.orch.io/v1", "kind: CustomResourceDefinition", "metadata: {name: scalers.example.com}", "spec:",
      "  group: example.com", "  scope: Namespaced", "  names: {plural: scalers, singular: scaler, kind: Scaler}", "  versions:",
      "  - name: v1", "    served: true", "    storage: true",
      "    subresources:", "      status: {}", "      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}",
      "    schema:", "      openAPIV3Schema:", "        type: object", "        properties:",
      "          spec: {type: object, properties: {replicas: {type: integer}}}",
      "          status: {type: object, properties: {replicas: {type: integer}, selector: {type: string}}}", "",
    ].join("\n"));
    await k.ok("apply", "-f", join(files, "scalers.yaml"));
    await k.ok("wait", "--for=condition=established", "--timeout=30s", "crd/scalers.example.com");
    await eventually("the custom kind served", async () => (await k.run(["create", "-f", "-"], { input: JSON.stringify({ apiVersion: "example.com/v1", kind: "Scaler", metadata: { name: "s1" }, spec: { replicas: 1 } }) })).code === 0, 20_000);
    // Its "controller" (the test): one replica, the burning pod, selected by app=burn.
    await k.ok("patch", "scaler", "s1", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { replicas: 1, selector: "app=burn" } }));
    // burn uses about 300m against 50m a replica: the HPA wants 6, capped at 3.
    await k.run(["create", "-f", "-"], { input: JSON.stringify({
      apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "s1" },
      spec: { scaleTargetRef: { apiVersion: "example.com/v1", kind: "Scaler", name: "s1" }, minReplicas: 1, maxReplicas: 3, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "AverageValue", averageValue: "50m" } } }] },
    }) });
    try {
      await eventually("the custom object scaled to 3", async () => JSON.parse(await k.ok("get", "scaler", "s1", "-o", "json")).spec.replicas === 3, 60_000);
      assert.match(await k.ok("describe", "hpa", "s1"), /New size: 3; reason: cpu resource above target/);
    } finally {
      await k.run(["delete", "hpa", "s1", "--wait=false"]);
    }
  });

  test("a HorizontalPodAutoscaler scales a Deployment whose pods burn CPU up to maxReplicas: conditions, events, kubectl's columns", async () => {
    writeFileSync(join(files, "burner.yaml"), [
      "apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: burner", "spec:", "  replicas: 1",
      "  selector:", "    matchLabels: {app: burner}", "  template:", "    metadata:", "      labels: {app: burner}", "    spec:",
      "      terminationGracePeriodSeconds: 1", "      containers:", "      - name: main", "        image: busybox",
      `        command: [sh, -c, ${JSON.stringify(`while true; do :; done # ${TOKEN}`)}]`,
      // 100m requested, held to 200m: 200% of the request against a 50% target.
      "        resources:", "          requests: {cpu: 100m}", "          limits: {cpu: 200m}", "---",
      "apiVersion: autoscaling/v2", "kind: HorizontalPodAutoscaler", "metadata:", "  name: burner", "spec:",
      "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burner}", "  minReplicas: 1", "  maxReplicas: 3",
      "  metrics:", "  - type: Resource", "    resource:", "      name: cpu", "      target: {type: Utilization, averageUtilization: 50}", "",
    ].join("\n"));
    await k.ok("apply", "-f", join(files, "burner.yaml"));
    try {
      const bad = await k.run(["create", "-f", "-"], { input: JSON.stringify({ apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "bad" }, spec: { scaleTargetRef: { kind: "Deployment", name: "x" }, minReplicas: 2, maxReplicas: 1 } }) });
      assert.match(bad.stderr, /spec\.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`/);
      await eventually("the deployment scaled to 3", async () => JSON.parse(await k.ok("get", "deployment", "burner", "-o", "json")).spec.replicas === 3, 90_000);
      const hpa = await eventually("the HPA's status", async () => {
        const h = JSON.parse(await k.ok("get", "hpa", "burner", "-o", "json")) as { status?: { desiredReplicas?: number; currentReplicas?: number; currentMetrics?: { resource: { current: { averageUtilization: number } } }[]; conditions?: { type: string; status: string; reason: string }[] } };
        return h.status?.currentReplicas === 3 ? h : undefined;
      }, 30_000);
      const conditions = Object.fromEntries((hpa.status!.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
      assert.equal(conditions["ScalingActive"], "True/ValidMetricFound");
      assert.match(conditions["AbleToScale"]!, /^True\//);
      assert.ok(hpa.status!.currentMetrics![0]!.resource.current.averageUtilization > 50);
      const table = await k.ok("get", "hpa", "burner");
      assert.match(table, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\s*$/m);
      assert.match(table, /^burner\s+Deployment\/burner\s+cpu: \d+%\/50%\s+1\s+3\s+3\s+/m);
      const described = await k.ok("describe", "hpa", "burner");
      assert.match(described, /Normal\s+SuccessfulRescale\s+.*New size: 3; reason: cpu resource utilization \(percentage of request\) above target/);
    } finally {
      await k.run(["delete", "-f", join(files, "burner.yaml"), "--wait=false"]);
    }
  });
});

describe("resource metrics with upstream's names (--api-group-suffix=k8s.io)", { skip: kubectlSkipReason() ?? false }, () => {
  test("kubectl top nodes and pods read metrics.k8s.io on the k8s.io profile too", async () => {
    const orch = await startOrch("server", ["--node-name=metrics-k8s", "--metric-resolution=1s", "--api-group-suffix=k8s.io"], { readyTimeoutMs: 60_000 });
    try {
      const k = new Kubectl(orch.kubeconfig);
      await k.ok("create", "-f", pod("quiet", `sleep ${TOKEN}`, { app: "quiet" }));
      await k.ok("wait", "--for=condition=Ready", "pod/quiet", "--timeout=60s");
      const nodes = await eventually("node metrics", async () => {
        const r = await k.run(["top", "nodes"]);
        return r.code === 0 && /^metrics-k8s\s+\d+m\s+/m.test(r.stdout) ? r.stdout : undefined;
      }, 30_000);
      assert.match(nodes, /^NAME\s+CPU\(cores\)/m);
      await eventually("pod metrics", async () => /^quiet\s+\d+m\s+\d+Mi/m.test((await k.run(["top", "pods"])).stdout) || undefined, 30_000);
    } finally {
      await orch.stop();
      await killMatching(`# ${TOKEN}|sleep ${TOKEN}`);
      rmSync(files, { recursive: true, force: true });
    }
  });
});

