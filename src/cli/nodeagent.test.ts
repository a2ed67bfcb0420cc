import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { get } from "node:https";
import { waitFor } from "../nodeagent/cri/testing/wait.js";
import { ensureCredentials, issueClientCert } from "../component/pki.js";
import { httpsGet } from "../component/testing/https-get.js";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));

function orch(args: string[]): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, "nodeagent", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, output: () => out, exit };
}

test("orch nodeagent: a bad drop-in exits 2 naming the file and the field", async () => {
  const dir = mkdtempSync(join(tmpdir(), "nodeagent-cli-"));
  try {
    writeFileSync(join(dir, "config.yaml"), "apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nmaxPods: 10\n");
    mkdirSync(join(dir, "conf.d"));
    writeFileSync(join(dir, "conf.d", "20-swap.conf"), "apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nmemorySwap:\n  swapBehavior: Lots\n");
    const r = orch(["--port", "0", "--config", join(dir, "config.yaml"), "--config-dir", join(dir, "conf.d"), "--root-dir", join(dir, "root")]);
    assert.equal(await r.exit, 2);
    assert.match(r.output(), /invalid configuration: .*20-swap\.conf: field memorySwap\.swapBehavior: unsupported value "Lots"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("orch nodeagent --bootstrap-kubeconfig: without --kubeconfig it is refused; an unreadable bootstrap file exits 1 naming it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "nodeagent-cli-boot-"));
  try {
    const alone = orch(["--port", "0", "--root-dir", join(dir, "root"), "--bootstrap-kubeconfig", join(dir, "boot.kubeconfig")]);
    assert.notEqual(await alone.exit, 0);
    assert.match(alone.output(), /--bootstrap-kubeconfig needs --kubeconfig/);
    const missing = orch(["--port", "0", "--root-dir", join(dir, "root"), "--cert-dir", join(dir, "pki"), "--kubeconfig", join(dir, "agent.kubeconfig"), "--bootstrap-kubeconfig", join(dir, "boot.kubeconfig")]);
    assert.equal(await missing.exit, 1);
    assert.match(missing.output(), /TLS bootstrap: .*boot\.kubeconfig/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("orch nodeagent: a second agent on the same lock file exits with a clear error; the first stops cleanly on SIGTERM", { skip: process.getuid?.() !== 0 ? "needs root (the embedded runtime)" : undefined }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "nodeagent-cli-"));
  try {
    writeFileSync(join(dir, "config.yaml"), `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nstaticPodPath: ${join(dir, "manifests")}\n`);
    const common = (n: string) => ["--config", join(dir, "config.yaml"), "--root-dir", join(dir, n), "--pod-logs-dir", join(dir, n, "logs"), "--lock-file", join(dir, "nodeagent.lock"), "--hostname-override", n, "--port", "0", "--bind-address", "127.0.0.1"];
    const first = orch(common("a"));
    const deadline = Date.now() + 20_000;
    while (!/running \(node a, standalone\)/.test(first.output())) {
      if (Date.now() > deadline) throw new Error(`first agent not running:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The component base serves health: /readyz turns 200 once the PLEG has relisted.
    const url = /serving (https:\/\/\S+)/.exec(first.output())![1]!;
    const readyz = () => new Promise<number>((resolve) => get(`${url}/readyz`, { rejectUnauthorized: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0); }).on("error", () => resolve(0)));
    let code = 0;
    for (let i = 0; i < 100 && code !== 200; i++) {
      code = await readyz();
      if (code !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(code, 200);
    const second = orch(common("b"));
    assert.equal(await second.exit, 1);
    assert.match(second.output(), /the lock file .*nodeagent\.lock is held by another node agent/);
    first.child.kill("SIGTERM");
    assert.equal(await first.exit, 0, first.output());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("orch nodeagent: SIGTERM leaves the pods running and the next agent on the --root-dir keeps them; with --stop-pods-on-exit they stop", { skip: process.getuid?.() !== 0 ? "needs root (the embedded runtime)" : undefined }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "nodeagent-cli-"));
  const token = String(900_000 + (process.pid % 90_000));
  const sleepers = () => new Promise<number[]>((resolve) => execFile("pgrep", ["-f", `^sleep ${token}$`], (_e, out) => resolve(out.split("\n").filter((l) => l !== "").map(Number))));
  const until = <T,>(what: string, probe: () => Promise<T | undefined>, output: () => string): Promise<T> =>
    waitFor(what, probe, 30_000).catch((err: Error) => Promise.reject(new Error(`${err.message}:\n${output()}`)));
  try {
    mkdirSync(join(dir, "manifests"));
    writeFileSync(join(dir, "config.yaml"), `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nstaticPodPath: ${join(dir, "manifests")}\n`);
    writeFileSync(join(dir, "manifests", "sleeper.yaml"), `apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper, namespace: default, annotations: {orch.io/host-root: \"true\"}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: main, image: busybox, command: [sleep, "${token}"]}]\n`);
    const args = ["--config", join(dir, "config.yaml"), "--root-dir", join(dir, "root"), "--pod-logs-dir", join(dir, "logs"), "--hostname-override", "keep", "--port", "0", "--bind-address", "127.0.0.1"];
    const first = orch(args);
    const [pid] = await until("the static pod's container", async () => ((await sleepers()).length === 1 ? await sleepers() : undefined), first.output);
    first.child.kill("SIGTERM");
    assert.equal(await first.exit, 0, first.output());
    assert.deepEqual(await sleepers(), [pid], "the container outlives the agent");

    const second = orch([...args, "--stop-pods-on-exit"]);
    await until("the runtime to re-adopt the container", async () => (/re-adopted 1 running containers/.test(second.output()) ? true : undefined), second.output);
    await until("the agent to be running", async () => (/running \(node keep, standalone\)/.test(second.output()) ? true : undefined), second.output);
    // Kept, not restarted: the pod worker's first syncs happen within the PLEG's first relists (1 s apart).
    for (const deadline = Date.now() + 2500; Date.now() < deadline;) {
      assert.deepEqual(await sleepers(), [pid], "the same process, and no second one");
      await new Promise((r) => setTimeout(r, 250));
    }
    second.child.kill("SIGTERM");
    assert.equal(await second.exit, 0, second.output());
    assert.deepEqual(await sleepers(), [], "--stop-pods-on-exit stopped it");
  } finally {
    for (const p of await sleepers()) process.kill(p, "SIGKILL");
    // Retried: a shim killed just now may still be closing its log files (an ENOTEMPTY here hid the test's own failure).
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});

test("orch nodeagent: authentication and authorization from its configuration: anonymous with AlwaysAllow reads /metrics, x509.clientCAFile admits that CA's client certificates, the defaults refuse both", { skip: process.getuid?.() !== 0 ? "needs root (the embedded runtime)" : undefined }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "nodeagent-cli-"));
  const pki = await ensureCredentials(join(dir, "pki"));
  const ca = { cert: pki.caCertPem, key: readFileSync(join(dir, "pki", "ca.key"), "utf8") };
  const clientCert = await issueClientCert(ca, "scraper");
  const run = async (name: string, extra: string) => {
    writeFileSync(join(dir, `${name}.yaml`), `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nstaticPodPath: ${join(dir, "manifests")}\n${extra}`);
    const agent = orch(["--config", join(dir, `${name}.yaml`), "--root-dir", join(dir, name), "--pod-logs-dir", join(dir, name, "logs"), "--hostname-override", name, "--port", "0", "--bind-address", "127.0.0.1", "--stop-pods-on-exit"]);
    try {
      await waitFor(`agent ${name} serving`, () => /serving (https:\/\/\S+)/.test(agent.output()) || undefined, 20_000);
      const url = `${/serving (https:\/\/\S+)/.exec(agent.output())![1]!}/metrics`;
      return [(await httpsGet(url)).status, (await httpsGet(url, { clientCert })).status];
    } finally {
      agent.child.kill("SIGTERM");
      await agent.exit;
    }
  };
  try {
    assert.deepEqual(await run("open", "authentication:\n  anonymous:\n    enabled: true\nauthorization:\n  mode: AlwaysAllow\n"), [200, 200], "an unknown certificate is just anonymous");
    assert.deepEqual(await run("x509", `authentication:\n  x509:\n    clientCAFile: ${join(dir, "pki", "ca.crt")}\n`), [401, 200]);
    assert.deepEqual(await run("closed", ""), [401, 401]);
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});
