// End to end: container log rotation with a 1 KiB containerLogMaxSize (an
// agent config given to `orch server --nodeagent-config`), a chatty container
// writing numbered lines, and kubectl 1.33: `kubectl logs -f` follows across
// rotations without losing or repeating a line, `kubectl logs` reads the
// current file only, rotated files are stamped and compressed, at most
// containerLogMaxFiles are kept, and `--previous` still reads the last instance.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-logrot-"));
const TOKEN = suiteToken(740_000);

describe("container log rotation through kubectl logs", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  let logDir: string;

  before(async () => {
    const config = join(files, "agent.yaml");
    writeFileSync(config, "apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\ncontainerLogMaxSize: 1Ki\ncontainerLogMaxFiles: 3\ncontainerLogMonitorInterval: 3s\n");
    orch = await startOrch("server", ["--node-name=logrot", `--nodeagent-config=${config}`], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    const pod = join(files, "pod.yaml");
    // About 1 KiB a second: a rotation at every check.
    writeFileSync(pod, `apiVersion: v1\nkind: Pod\nmetadata: {name: chatty}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: main, image: busybox, command: [sh, -c, "while [ ! -e /tmp/go-${TOKEN} ]; do sleep 0.1; done; i=0; while [ $i -lt 400 ]; do echo line-$i; i=$((i+1)); sleep 0.02; done; while [ ! -e /tmp/stop-${TOKEN} ]; do sleep 0.1; done; echo last-words; exit 3"]}\n`);
    await k.ok("create", "-f", pod);
    await k.ok("wait", "--for=condition=Ready", "pod/chatty", "--timeout=60s");
    const uid = await k.ok("get", "pod", "chatty", "-o", "jsonpath={.metadata.uid}");
    logDir = join(orch.dataDir, "nodeagent", "pod-logs", `default_chatty_${uid}`, "main");
  });
  after(async () => {
    await orch?.stop();
    await killMatching(String(TOKEN));
    rmSync(`/tmp/go-${TOKEN}`, { force: true });
    rmSync(`/tmp/stop-${TOKEN}`, { force: true });
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("kubectl logs -f from the start follows across rotations: every line once, in order; the files are rotated, compressed and capped", async () => {
    const follow = k.spawn(["logs", "-f", "chatty"]);
    const lines = () => follow.output().split("\n").filter((l) => l.startsWith("line-"));
    try {
      // Started before the output: every line is in the followed files.
      await new Promise((r) => setTimeout(r, 1500));
      await k.ok("exec", "chatty", "--", "touch", `/tmp/go-${TOKEN}`);
      await eventually("line-399 followed", async () => lines().includes("line-399"), 40_000);
    } finally {
      follow.child.kill("SIGTERM");
      await follow.exited;
    }
    const got = lines();
    assert.deepEqual(got, Array.from({ length: 400 }, (_, i) => `line-${i}`), "no line lost or repeated");
    // Rotation happened meanwhile: stamped names, the older ones compressed, never more than 3 files.
    await eventually("a rotation done", async () => readdirSync(logDir).some((n) => /^0\.log\.\d{8}-\d{6}$/.test(n)), 10_000);
    const names = readdirSync(logDir);
    assert.ok(names.length <= 3, names.join(" "));
    for (const n of names) assert.match(n, /^0\.log(\.\d{8}-\d{6}(\.gz)?)?$/);
    // kubectl logs reads the current file only: not the first lines any more.
    const now = await k.ok("logs", "chatty");
    assert.doesNotMatch(now, /^line-0$/m);
  });

  test("--previous reads the last instance's file, rotation or not", async () => {
    await k.ok("exec", "chatty", "--", "touch", `/tmp/stop-${TOKEN}`);
    await eventually("restarted", async () => Number(await k.ok("get", "pod", "chatty", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")) >= 1, 30_000);
    // --previous reads the last instance's current file only (as upstream's kubelet): a rotation after line-399
    // may have left that file empty, so the instance's last words, written just before it exits, are what it shows.
    const prev = await k.ok("logs", "--previous", "chatty");
    assert.match(prev, /^last-words$/m);
  });
});
