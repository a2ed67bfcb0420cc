// End to end: `kubectl exec` of kubectl 1.27 (SPDY/3.1, v4.channel.k8s.io:
// client-go's SPDY executor, as upstream's e2e.test uses) against a real
// `orch server`: the API server splices the SPDY upgrade to the node agent,
// which speaks SPDY itself (src/nodeagent/exec/spdy/). Output, stderr apart,
// stdin and its end, the exit code, and attach's output over SPDY.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlPath, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-spdy-"));
const TOKEN = suiteToken(710_000);
const skip = kubectlSkipReason() ?? (kubectlPath("1.27") === undefined ? "kubectl.1.27 is not installed" : false);

describe("kubectl 1.27 exec over SPDY/3.1", { skip }, () => {
  let orch: OrchProcess;
  let k: Kubectl;

  before(async () => {
    orch = await startOrch("server", ["--node-name=spdy-main"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig, "1.27");
    const path = join(files, "one.yaml");
    writeFileSync(path, `apiVersion: v1\nkind: Pod\nmetadata: {name: one}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: main, image: busybox, command: [sh, -c, "i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done; : ${TOKEN}"]}\n`);
    await k.ok("create", "-f", path);
    await k.ok("wait", "--for=condition=Ready", "pod/one", "--timeout=60s");
  });
  after(async () => {
    await orch?.stop();
    await killMatching(String(TOKEN));
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("output, stderr apart, exit code 0", async () => {
    const r = await k.run(["exec", "one", "--", "sh", "-c", "echo out; echo err >&2"]);
    assert.deepEqual(r, { code: 0, stdout: "out\n", stderr: "err\n" });
  });

  test("a non-zero exit code is kubectl's (the v4 status on the error stream)", async () => {
    const r = await k.run(["exec", "one", "--", "sh", "-c", "exit 7"]);
    assert.equal(r.code, 7);
    assert.match(r.stderr, /command terminated with exit code 7/);
  });

  test("stdin reaches the command and its end (FIN) ends it", async () => {
    const r = await k.run(["exec", "-i", "one", "--", "sh", "-c", "cat; echo done"], { input: "data\nmore\n" });
    assert.deepEqual([r.code, r.stdout], [0, "data\nmore\ndone\n"]);
  });

  test("more output than a flow-control window (200 KiB) arrives whole", async () => {
    const r = await k.run(["exec", "one", "--", "sh", "-c", "head -c 204800 /dev/zero | tr '\\\\0' x"]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.length, 204800);
  });

  test("a TTY (-t) over SPDY: one output stream, the resize stream taken", async () => {
    const r = await k.run(["exec", "-t", "one", "--", "sh", "-c", "echo tty; exit 0"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /tty/);
  });

  test("a missing container is refused before the upgrade with upstream's text", async () => {
    const r = await k.run(["exec", "one", "-c", "nope", "--", "true"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /container nope is not valid for pod one|not found/);
  });

  test("kubectl attach over SPDY carries the container's output", async () => {
    const running = k.spawn(["attach", "one"]);
    let out = "";
    running.child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 15_000;
    while (!/tick \d+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    running.child.kill("SIGTERM");
    await running.exited;
    assert.match(out, /tick \d+/);
  });
});
