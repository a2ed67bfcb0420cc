// End to end: the dashboard (issue 21) in a real browser. `orch server` (API
// server, controllers, scheduler, a node agent on the embedded runtime)
// serves it at /ui/; Playwright drives Debian's chromium headless. The tests
// sign in with the admin token, watch a Deployment scale from 1 to 5 with its
// pods appearing live, read a log line, run `echo hi` in the exec terminal
// (WebSocket v5.channel.k8s.io with the token as a subprotocol), edit a
// ConfigMap's YAML (server-side apply: the conflict with kubectl's fields is
// shown, then forced) and find a custom kind's objects through discovery.
// ORCH_DASHBOARD_SCREENSHOTS=DIR saves the main views there (docs/dashboard.md).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { skipOrFailInCi } from "./support/skip.js";

const CHROMIUM = "/usr/bin/chromium";
const TOKEN = suiteToken(910_000);
const files = mkdtempSync(join(tmpdir(), "orch-e2e-dashboard-"));
const shots = process.env["ORCH_DASHBOARD_SCREENSHOTS"];

function skipReason(): string | undefined {
  return kubectlSkipReason() ?? skipOrFailInCi(existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`);
}

function manifest(name: string, text: string): string {
  const path = join(files, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

describe("the dashboard in chromium", { skip: skipReason() ?? false, timeout: 180_000 }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  let browser: Browser;
  let page: Page;
  let ui: string;
  // Requests the browser saw fail at the network level (aborted watches of views left are expected), for failure messages.
  const failed: string[] = [];
  // The browser's console (errors and warnings), for failure messages.
  const consoleLines: string[] = [];
  // The resource metrics API's answers the page read (path → bodies), to check the charts draw what it said.
  const metricsAnswers = new Map<string, unknown[]>();

  const shot = async (name: string) => {
    if (shots) await page.screenshot({ path: join(shots, `dashboard-${name}.png`) });
  };

  before(async () => {
    orch = await startOrch("server", ["--node-name=dash-main"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    ui = `${orch.url}/ui/`;
    assert.match(orch.output(), new RegExp(`dashboard ${ui.replace(/[.]/g, "\\.")}`), "the ready line names the dashboard");
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
    // The cluster CA is the server's own: the browser is told to accept it (a user imports ca.crt or clicks through).
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on("requestfailed", (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
    page.on("response", (r) => {
      const path = new URL(r.url()).pathname;
      if (!path.startsWith("/apis/metrics.k8s.io/") || r.status() !== 200) return;
      void r.json().then((body: unknown) => metricsAnswers.set(path, [...(metricsAnswers.get(path) ?? []), body]), () => {});
    });
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") consoleLines.push(`${m.type()}: ${m.text()}`); });
  });
  after(async () => {
    const broken = failed.filter((f) => !f.endsWith("net::ERR_ABORTED"));
    if (broken.length > 0) process.stderr.write(`requests that failed in the browser:\n${broken.join("\n")}\n`);
    if (process.env["ORCH_DASHBOARD_DEBUG"]) process.stderr.write(orch.output().slice(-5000));
    await browser?.close();
    await orch?.stop();
    await killMatching(`sleep ${TOKEN}`);
    await killMatching(`x=${TOKEN}`);
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("signs in with the admin token; a wrong token is refused", async () => {
    await load(page, ui);
    await page.getByLabel("token", { exact: true }).fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "the server does not accept this token" }).waitFor();
    const kubeconfig = readFileSync(orch.kubeconfig, "utf8");
    // The kubeconfig itself, pasted: its current user's token is used.
    await page.getByLabel("token", { exact: true }).fill(kubeconfig);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("user").filter({ hasText: "admin" }).waitFor();
    await page.locator('.phase[data-phase="Running"]').waitFor();
  });

  test("a Deployment scaled from 1 to 5 in the page shows its pods appear live", async () => {
    await k.ok("create", "-f", manifest("web", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: main, image: busybox, command: [sh, -c, "sleep ${TOKEN}"]}
`));
    await page.goto(`${ui}#/object/apps/deployments/default/web`);
    const pods = page.locator('.kind-table[data-resource="pods."] .vtable');
    await assertRows(pods, 1);
    await page.getByLabel("replicas").fill("5");
    await page.getByRole("button", { name: "Scale" }).click();
    await assertRows(pods, 5);
    assert.equal((await k.ok("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")).trim(), "5");
    await shot("deployment");
    // Restart the rollout: a new template annotation, as kubectl rollout restart writes it.
    await page.getByRole("button", { name: "Restart rollout" }).click();
    await waitFor(async () => (await k.ok("get", "deployment", "web", "-o", "jsonpath={.spec.template.metadata.annotations}")).includes("kubectl.orch.io/restartedAt")).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${(await page.getByRole("alert").allTextContents()).join("; ")} ${await k.ok("get", "deployment", "web", "-o", "jsonpath={.spec.template.metadata}")}`);
    });
    await page.goto(`${ui}#/pods`);
    await page.locator('.kind-table[data-resource="pods."] tbody tr[data-key]').first().waitFor();
    await shot("pods");
    // The overview: the node (Ready, no pressure) and the pods by phase, live.
    await page.goto(`${ui}#/`);
    await page.locator(".overview tr[data-key=dash-main]").filter({ hasText: "Ready" }).waitFor();
    await page.locator('.phase[data-phase="Running"] .count').filter({ hasText: /^[5-9]$/ }).waitFor();
    // Charts where the resource metrics API is served, and a plain "metrics not available" where it is not.
    await page.locator('[data-testid="charts"], .metrics-unavailable').first().waitFor();
    await shot("overview");
  });

  test("the charts draw real samples from the metrics API: a busy pod's CPU and memory, the node's", async () => {
    // A container that spins: its CPU usage is far from zero and changes from sample to sample.
    await k.ok("create", "-f", manifest("burn", `apiVersion: v1
kind: Pod
metadata: {name: burn}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: spin, image: busybox, command: [sh, -c, "x=${TOKEN}; while :; do :; done"]}
`));
    await k.ok("wait", "--for=condition=Ready", "pod/burn", "--timeout=60s");
    await page.goto(`${ui}#/object/core/pods/default/burn/metrics`);
    const cpu = page.locator('[data-testid="charts"] .chart[data-chart="CPU"]');
    const memory = page.locator('[data-testid="charts"] .chart[data-chart="Memory"]');
    // Three samples (10 s apart) with a value for the container.
    const values = async (chart: typeof cpu): Promise<number[]> => {
      const drawn = JSON.parse((await chart.getAttribute("data-series")) ?? "{}") as Record<string, (number | null)[]>;
      return (drawn["spin"] ?? []).filter((v): v is number => typeof v === "number");
    };
    await waitFor(async () => (await values(cpu)).length >= 3, 90_000).catch(async (err: Error) => {
      const said = await page.locator(".charts .muted, .metrics-unavailable").allTextContents();
      throw new Error(`${err.message}: the chart drew ${await cpu.getAttribute("data-series").catch(() => "nothing")}; the page says ${JSON.stringify(said)}; console: ${consoleLines.slice(-10).join(" | ")}; failed requests: ${failed.slice(-10).join(" | ")}; kubectl top: ${await k.run(["top", "pod", "burn"]).then((r) => r.stdout + r.stderr)}`);
    });
    const cpus = await values(cpu);
    const mems = await values(memory);
    assert.ok(cpus.every((v) => v > 50), `a spinning container uses more than 50 millicores in every sample: ${cpus}`);
    assert.ok(new Set(cpus).size > 1, `the CPU samples are measured, not a constant: ${cpus}`);
    // Each value drawn is one the metrics API answered (the path kubectl top reads), in millicores.
    const answered = (metricsAnswers.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burn") ?? []) as { containers: { name: string; usage: { cpu: string } }[] }[];
    const apiCpus = answered.map((b) => millicores(b.containers.find((c) => c.name === "spin")?.usage.cpu ?? "0"));
    assert.ok(apiCpus.length >= cpus.length, `the page read the pod's metrics from the metrics API (${apiCpus.length} answers for ${cpus.length} samples)`);
    for (const v of cpus) assert.ok(apiCpus.some((a) => Math.abs(a - v) < 0.001), `the drawn ${v} is among the metrics API's answers ${apiCpus}`);
    assert.ok(mems.length >= 3 && mems.every((v) => v > 0), `the memory samples are positive: ${mems}`);
    // The same source as kubectl top.
    const top = (await k.ok("top", "pod", "burn", "--no-headers")).trim().split(/\s+/);
    assert.ok(Number.parseInt(top[1] ?? "0", 10) > 50, `kubectl top agrees the pod is busy: ${top.join(" ")}`);
    await shot("metrics");
    // The overview's node charts: the node's own series, with real values.
    await page.goto(`${ui}#/`);
    const nodeCpu = page.locator('[data-testid="charts"] .chart[data-chart="CPU"]');
    await waitFor(async () => {
      const drawn = JSON.parse((await nodeCpu.getAttribute("data-series")) ?? "{}") as Record<string, (number | null)[]>;
      return (drawn["dash-main"] ?? []).some((v) => typeof v === "number" && v > 50);
    }, 30_000);
    await k.ok("delete", "pod", "burn", "--wait=false");
  });

  test("RBAC applies unchanged: a service account allowed to view sees the Deployment and is refused its scale", async () => {
    await k.ok("create", "serviceaccount", "viewer");
    // (kubectl create rolebinding writes rbac.authorization.k8s.io; this server's profile names the group rbac.authorization.orch.io.)
    await k.ok("apply", "-f", manifest("viewer", `apiVersion: rbac.authorization.orch.io/v1
kind: RoleBinding
metadata: {name: viewer, namespace: default}
roleRef: {apiGroup: rbac.authorization.orch.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: viewer, namespace: default}]
`));
    const token = (await k.ok("create", "token", "viewer")).trim();
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const viewer = await context.newPage();
    viewer.setDefaultTimeout(30_000);
    viewer.on("requestfailed", (r) => failed.push(`viewer ${r.url()}: ${r.failure()?.errorText}`));
    viewer.on("console", (m) => failed.push(`viewer console ${m.type()}: ${m.text()}`));
    try {
      await load(viewer, ui);
      await viewer.getByLabel("token", { exact: true }).fill(token);
      await viewer.getByRole("button", { name: "Sign in" }).click();
      await viewer.getByTestId("user").filter({ hasText: "system:serviceaccount:default:viewer" }).waitFor();
      await viewer.goto(`${ui}#/object/apps/deployments/default/web`);
      // (The rollout restarted above may still be replacing pods: some rows, not a count.)
      await viewer.locator('.kind-table[data-resource="pods."] tbody tr[data-key]').first().waitFor();
      await viewer.getByLabel("replicas").fill("2");
      await viewer.getByRole("button", { name: "Scale" }).click();
      await viewer.getByRole("alert").filter({ hasText: /forbidden: User "system:serviceaccount:default:viewer" cannot patch resource "deployments\/scale"/ }).waitFor();
      assert.equal((await k.ok("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")).trim(), "5");
      // Nodes are cluster-scoped: the view role of one namespace does not reach them.
      await viewer.goto(`${ui}#/`);
      await viewer.getByRole("alert").filter({ hasText: /cannot list resource "nodes"/ }).waitFor();
    } finally {
      await context.close();
    }
  });

  test("a pod's log line is read, following", async () => {
    await k.ok("create", "-f", manifest("logger", `apiVersion: v1
kind: Pod
metadata: {name: logger}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [sh, -c, "echo hello from the dashboard test; i=0; while true; do i=$((i+1)); echo line $i; sleep 1; done; : ${TOKEN}"]}
`));
    await k.ok("wait", "--for=condition=Ready", "pod/logger", "--timeout=60s");
    await page.goto(`${ui}#/object/core/pods/default/logger/summary`);
    await page.locator('[data-field="phase"]').filter({ hasText: "Running" }).waitFor();
    await shot("pod");
    await page.goto(`${ui}#/object/core/pods/default/logger/logs`);
    const log = page.getByTestId("log");
    await log.filter({ hasText: "hello from the dashboard test" }).waitFor().catch(async (err: Error) => {
      throw new Error(`${err.message}\nlog shown: ${await log.textContent()}\nerrors: ${(await page.getByRole("alert").allTextContents()).join("; ")}\nkubectl logs: ${(await k.run(["logs", "logger", "--tail=3"])).stdout}\nfailed requests: ${failed.filter((f) => f.includes("/log")).join("\n")}`);
    });
    // Following: lines written after the page opened arrive without a reload.
    const seen = Number(/line (\d+)\s*$/.exec((await log.textContent()) ?? "")?.[1] ?? 0);
    await log.filter({ hasText: `line ${seen + 2}` }).waitFor();
    await shot("logs");
  });

  test("echo hi in the exec terminal prints hi", async () => {
    await page.goto(`${ui}#/object/core/pods/default/logger/exec`);
    await page.getByTestId("exec-state").filter({ hasText: "connected (v5.channel.k8s.io)" }).waitFor();
    await page.locator(".xterm").click();
    await page.keyboard.type("echo hi\n");
    // A row of the screen reads exactly "hi" (the command's echo reads "... echo hi").
    await waitFor(async () => (await page.locator(".xterm-rows > div").allTextContents()).some((row) => row.trim() === "hi"));
    await shot("exec");
  });

  test("a ConfigMap's YAML edited in the page: the conflict with kubectl's field is shown, forcing applies it", async () => {
    await k.ok("create", "configmap", "settings", "--from-literal=color=blue");
    await page.goto(`${ui}#/object/core/configmaps/default/settings/yaml`);
    const editor = page.getByLabel("YAML");
    await waitFor(async () => (await editor.inputValue()).includes("color: blue"));
    const text = await editor.inputValue();
    await editor.fill(text.replace("color: blue", "color: green"));
    await page.getByRole("button", { name: "Apply", exact: true }).click();
    // kubectl create owns data.color: server-side apply answers 409 naming it.
    await page.getByLabel("conflicts").filter({ hasText: "kubectl" }).waitFor();
    assert.equal((await k.ok("get", "configmap", "settings", "-o", "jsonpath={.data.color}")).trim(), "blue");
    await shot("yaml-conflict");
    await page.getByRole("button", { name: /Force apply/ }).click();
    await page.getByText('as field manager "dashboard"').waitFor();
    assert.equal((await k.ok("get", "configmap", "settings", "-o", "jsonpath={.data.color}")).trim(), "green");
    // A change from elsewhere reaches the clean editor through the watch.
    await k.ok("patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"size":"large"}}');
    await waitFor(async () => (await editor.inputValue()).includes("size: large"));
  });

  test("1,000 pods: the list renders them (virtualized) and shows a new one within moments of its watch event", async () => {
    // Pods no scheduler takes (schedulerName nobody runs): they stay Pending and start nothing.
    const token = /token: (\S+)/.exec(readFileSync(orch.kubeconfig, "utf8"))![1]!;
    const pod = (name: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "crowd" }, spec: { schedulerName: "nobody", containers: [{ name: "main", image: "busybox" }] } });
    await k.ok("create", "namespace", "crowd");
    const names = Array.from({ length: 1000 }, (_, i) => `crowd-${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 25) {
      await Promise.all(names.slice(i, i + 25).map((n) => post(orch.url, token, "/api/v1/namespaces/crowd/pods", pod(n))));
    }
    await page.goto(`${ui}#/pods`);
    await page.getByLabel("namespace").selectOption("crowd");
    const table = page.locator('.kind-table[data-resource="pods."] .vtable');
    await assertRows(table, 1000);
    // Only the rows in view are in the DOM.
    assert.ok((await table.locator("tbody tr[data-key]").count()) < 100);
    await page.evaluate(`new Promise((resolve) => {
      const el = document.querySelector('.kind-table[data-resource="pods."] .vtable');
      new MutationObserver(() => { if (el.getAttribute("data-rows") === "1001" && !window.__seenAt) window.__seenAt = Date.now(); }).observe(el, { attributes: true });
      resolve();
    })`);
    const written = Date.now();
    await post(orch.url, token, "/api/v1/namespaces/crowd/pods", pod("crowd-late"));
    await assertRows(table, 1001);
    const latency = (await page.evaluate("window.__seenAt")) as number - written;
    process.stderr.write(`dashboard: a pod created in a 1,000-pod namespace was on screen ${latency} ms after the create was sent\n`);
    // The write, the watch event and the render together (the issue asks 200 ms of the event for the render; margin for a loaded machine).
    assert.ok(latency < 500, `${latency} ms`);
    await shot("pods-1000");
    await k.ok("delete", "namespace", "crowd", "--wait=false");
    await page.getByLabel("namespace").selectOption("");
  });

  test("a custom kind is found through discovery and listed with its own columns", async () => {
    await k.ok("apply", "-f", manifest("crd", `apiVersion: apiextensions.orch.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: string}}}}}}
    additionalPrinterColumns:
    - {name: Size, type: string, jsonPath: .spec.size}
`));
    await k.ok("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s");
    await k.ok("create", "-f", manifest("widget", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: sprocket}\nspec: {size: XL}\n"));
    await page.goto(`${ui}#/kinds`);
    await page.getByLabel("filter kinds").fill("widget");
    await page.getByRole("link", { name: "Widget", exact: true }).click();
    const table = page.locator('.kind-table[data-resource="widgets.example.com"]');
    await table.locator("th", { hasText: "Size" }).waitFor();
    await table.locator("tr", { hasText: "sprocket" }).filter({ hasText: "XL" }).waitFor();
    await shot("custom-kind");
  });
});

/**
 * Opens the page, again when Chromium drops the load with net::ERR_NETWORK_CHANGED
 * (it does when the node agent adds a pod's interface on this machine; docs/dashboard.md).
 */
async function load(p: Page, url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await p.goto(url);
      // The script itself may have been dropped (a blank page): then load again.
      await p.locator(".signin, .shell").first().waitFor({ timeout: 5_000 });
      return;
    } catch (err) {
      if (attempt >= 5 || !/ERR_NETWORK_CHANGED|Timeout/.test(String((err as Error).message))) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** POST a JSON object with the admin token (the server's CA is its own: not checked here). */
function post(url: string, token: string, path: string, body: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = httpsRequest(`${url}${path}`, { method: "POST", rejectUnauthorized: false, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(data) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => (res.statusCode === 201 ? resolve() : reject(new Error(`POST ${path}: ${res.statusCode} ${text}`))));
    });
    req.on("error", reject);
    req.end(data);
  });
}

/** A CPU quantity (250m, 1, 1500000n) in millicores. */
function millicores(q: string): number {
  const m = /^([0-9.]+)(n|u|m|)$/.exec(q);
  if (!m) return NaN;
  return Number(m[1]) * { n: 1e-6, u: 1e-3, m: 1, "": 1000 }[m[2] as "n" | "u" | "m" | ""];
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits for the virtual table to hold `n` rows (its data-rows, what the watch delivered). */
async function assertRows(table: ReturnType<Page["locator"]>, n: number): Promise<void> {
  await table.and(table.page().locator(`[data-rows="${n}"]`)).waitFor({ timeout: 60_000 });
}
