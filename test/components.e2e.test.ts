// Every orch component that runs as a process today (apiserver,
// controller-manager, proxy, cloud-controller-manager), started for real
// against a real API server: health and z-pages answer, /metrics and
// /metrics/slis pass `promtool check metrics`, and each carries the metrics
// seed 002 puts on all components.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { assertExposesMetric, parseExposition, promtoolCheckMetrics, promtoolSkipReason } from "../src/component/metrics/testing.js";
import { httpsGet } from "../src/component/testing/https-get.js";
import { packageRoot } from "../src/component/package-root.js";
import { startComponent, startOrch, type ComponentProcess, type OrchProcess } from "./support/orch-process.js";

async function untilReady(name: string, url: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await httpsGet(`${url}/readyz`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not become ready within 20 s: ${(await httpsGet(`${url}/readyz?verbose`)).text}`);
}

const PROXY_CHAINS = `C${process.pid.toString(36).toUpperCase()}`.slice(0, 8);
const BUILD_INFO = ["build_date", "compiler", "git_commit", "git_tree_state", "git_version", "go_version", "major", "minor", "platform"];

describe("components as processes", () => {
  let api: OrchProcess;
  let token: string;
  const components: Record<string, ComponentProcess | OrchProcess> = {};
  let agentDir: string | undefined;

  before(async () => {
    api = await startOrch("apiserver", ["--feature-gates=NativeHistograms=true"]);
    token = readFileSync(join(api.dataDir, "admin.token"), "utf8").trim();
    components["orch-apiserver"] = api;
    const common = [`--kubeconfig=${api.kubeconfig}`, "--feature-gates=NativeHistograms=true"];
    agentDir = mkdtempSync(join(tmpdir(), "orch-components-agent-"));
    const [kcm, proxy, ccm, scheduler, agent] = await Promise.all([
      startComponent("controller-manager", [...common, "--secure-port=0", "--leader-elect=true"]),
      // Root programs iptables: under chains of this test's own, removed in after().
      startComponent("proxy", [...common, "--metrics-bind-address=127.0.0.1:0", `--iptables-chain-prefix=${PROXY_CHAINS}`]),
      startComponent("cloud-controller-manager", [...common, "--secure-port=0"]),
      startComponent("scheduler", [...common, "--secure-port=0", "--leader-elect=true"]),
      // A joined node agent with all its files in a temporary folder (embedded runtime, no static pods).
      startComponent("nodeagent", [
        ...common,
        "--bind-address=127.0.0.1",
        "--port=0",
        `--root-dir=${join(agentDir, "root")}`,
        `--cert-dir=${join(agentDir, "pki")}`,
        `--pod-logs-dir=${join(agentDir, "logs")}`,
        "--hostname-override=components-e2e",
      ]),
    ]);
    Object.assign(components, { "orch-controller-manager": kcm, "orch-proxy": proxy, "cloud-controller-manager": ccm, "orch-scheduler": scheduler, "orch-nodeagent": agent });
    // A component serves before its informers have synced; /healthz includes the
    // readiness checks, so wait for /readyz rather than racing the first list.
    await Promise.all(Object.entries(components).map(([name, c]) => untilReady(name, c.url)));
  });
  after(async () => {
    await Promise.all(Object.entries(components).filter(([n]) => n !== "orch-apiserver").map(([, c]) => c.stop()));
    await api?.stop();
    if (agentDir !== undefined) rmSync(agentDir, { recursive: true, force: true });
    spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${PROXY_CHAINS}`]);
  });

  test("health is public, metrics need a token, /statusz names the component", async () => {
    for (const [name, c] of Object.entries(components)) {
      assert.equal((await httpsGet(`${c.url}/healthz`)).status, 200, name);
      assert.equal((await httpsGet(`${c.url}/livez?verbose`)).text.endsWith("livez check passed\n"), true, name);
      assert.equal((await httpsGet(`${c.url}/metrics`)).status, 401, name);
      const statusz = await httpsGet(`${c.url}/statusz`, { token });
      assert.equal(statusz.text.split("\n")[0], `${name} statusz`, name);
    }
  });

  test("every component's /metrics and /metrics/slis pass promtool check metrics and carry the all-component metrics", async (ctx) => {
    const skip = promtoolSkipReason();
    for (const [name, c] of Object.entries(components)) {
      const metrics = await httpsGet(`${c.url}/metrics`, { token });
      assert.equal(metrics.status, 200, name);
      const slis = await httpsGet(`${c.url}/metrics/slis`, { token });
      const families = parseExposition(metrics.text);
      assertExposesMetric(families, { name: "orch_build_info", kind: "gauge", labels: BUILD_INFO });
      assertExposesMetric(families, { name: "orch_feature_enabled", kind: "gauge", labels: ["name", "stage"] });
      assert.match(metrics.text, /^orch_feature_enabled\{name="NativeHistograms",stage="ALPHA"\} 1$/m, name);
      assertExposesMetric(families, { name: "registered_metrics_total", kind: "counter", labels: ["deprecated_version", "stability_level"] });
      assertExposesMetric(parseExposition(slis.text), { name: "orch_healthchecks_total", kind: "counter", labels: ["name", "status", "type"] });
      if (skip !== undefined) continue;
      for (const [what, body] of [["/metrics", metrics.text], ["/metrics/slis", slis.text]] as const) {
        const r = await promtoolCheckMetrics(body);
        assert.equal(r.code, 0, `${name} ${what}: ${r.output}`);
      }
    }
    if (skip !== undefined) ctx.skip(skip);
  });

  test("the controller managers report their controllers, work queues, informers, leader election and REST client", async () => {
    for (const [name, manager, controller, queue] of [
      ["orch-controller-manager", "orch-controller-manager", "namespace-controller", "namespace"],
      ["cloud-controller-manager", "cloud-controller-manager", "cloud-node-controller", "cloud_node"],
    ] as const) {
      const c = components[name]!;
      // Leader election and informer sync take a moment: wait for the gauge rather than sleeping.
      let text = "";
      for (let i = 0; i < 200; i++) {
        text = (await httpsGet(`${c.url}/metrics`, { token })).text;
        if (text.includes(`running_managed_controllers{manager="${manager}",name="${controller}"} 1`) && text.includes("informer_lists_total")) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const f = parseExposition(text);
      assert.match(text, new RegExp(`^running_managed_controllers\\{manager="${manager}",name="${controller}"\\} 1$`, "m"), name);
      for (const m of ["workqueue_adds_total", "workqueue_depth", "workqueue_retries_total", "workqueue_longest_running_processor_seconds", "workqueue_unfinished_work_seconds"]) {
        assertExposesMetric(f, { name: m, kind: m.endsWith("_total") ? "counter" : "gauge", labels: ["name"] });
      }
      assert.match(text, new RegExp(`^workqueue_depth\\{name="${queue}"\\} \\d+$`, "m"), name);
      assertExposesMetric(f, { name: "running_managed_controllers", kind: "gauge", labels: ["manager", "name"] });
      assertExposesMetric(f, { name: "leader_election_master_status", kind: "gauge", labels: ["name"] });
      assertExposesMetric(f, { name: "informer_lists_total", kind: "counter", labels: ["resource"] });
      assertExposesMetric(f, { name: "rest_client_requests_total", kind: "counter", labels: ["code", "host", "method"] });
    }
    const proxy = parseExposition((await httpsGet(`${components["orch-proxy"]!.url}/metrics`, { token })).text);
    assertExposesMetric(proxy, { name: "informer_store_items", kind: "gauge", labels: ["resource"] });
  });

  test("the scheduler, proxy and node agent report the REST client and informers they use; the scheduler its leader election", async () => {
    for (const name of ["orch-scheduler", "orch-proxy", "orch-nodeagent"]) {
      const f = parseExposition((await httpsGet(`${components[name]!.url}/metrics`, { token })).text);
      assertExposesMetric(f, { name: "rest_client_requests_total", kind: "counter", labels: ["code", "host", "method"] });
      assertExposesMetric(f, { name: "informer_lists_total", kind: "counter", labels: ["resource"] });
      assertExposesMetric(f, { name: "informer_store_items", kind: "gauge", labels: ["resource"] });
    }
    const scheduler = parseExposition((await httpsGet(`${components["orch-scheduler"]!.url}/metrics`, { token })).text);
    assertExposesMetric(scheduler, { name: "leader_election_master_status", kind: "gauge", labels: ["name"] });
  });
});
