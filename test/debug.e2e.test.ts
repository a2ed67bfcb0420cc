// End to end: `kubectl debug` (kubectl 1.33) against a real `orch server`
// process. kubectl patches pods/ephemeralcontainers; the node agent starts the
// debug container in the running pod's sandbox on the embedded runtime (busybox
// is not imported: containers are host processes here), reports it in
// status.ephemeralContainerStatuses, never restarts it, and logs and exec reach
// it by name. The interactive form with a terminal (-it) is tested in
// attach-interactive.e2e.test.ts; -i with piped input here.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-debug-"));
// A number no other process on the machine uses, so this suite's containers can be found (and ended) by pid.
const TOKEN = suiteToken(600_000);

interface Status {
  name: string;
  ready: boolean;
  restartCount: number;
  state: { running?: object; terminated?: { exitCode: number }; waiting?: { reason: string } };
}

describe("kubectl debug against orch server", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const ephemeral = async (pod: string): Promise<Status[]> => JSON.parse((await k.ok("get", "pod", pod, "-o", "jsonpath={.status.ephemeralContainerStatuses}")) || "[]") as Status[];
  const statusOf = async (pod: string, name: string) => (await ephemeral(pod)).find((s) => s.name === name);

  before(async () => {
    orch = await startOrch("server", ["--node-name=debug-main"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    const path = join(files, "target.yaml");
    writeFileSync(path, `apiVersion: v1\nkind: Pod\nmetadata: {name: target}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: main, image: busybox, command: [sh, -c, "sleep ${TOKEN}"]}\n`);
    await k.ok("create", "-f", path);
    await k.ok("wait", "--for=condition=Ready", "pod/target", "--timeout=60s");
  });
  after(async () => {
    await orch?.stop();
    await killMatching(`sleep ${TOKEN}`);
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("kubectl debug -c dbg runs in the pod: Running in ephemeralContainerStatuses, logs show its output, exec reaches it", async () => {
    const r = await k.run(["debug", "target", "--image=busybox", "-c", "dbg", "--", "sh", "-c", `echo hi; sleep ${TOKEN}`]);
    assert.equal(r.code, 0, r.stderr);
    await eventually("dbg running", async () => (await statusOf("target", "dbg"))?.state.running !== undefined, 30_000);
    const s = (await statusOf("target", "dbg"))!;
    assert.deepEqual([s.ready, s.restartCount], [false, 0]);
    await eventually("hi in dbg's log", async () => (await k.run(["logs", "target", "-c", "dbg"])).stdout === "hi\n", 20_000);
    assert.deepEqual(await k.run(["exec", "target", "-c", "dbg", "--", "true"]), { code: 0, stdout: "", stderr: "" });
    // The pod itself is unchanged: still Ready with its one container.
    assert.equal(await k.ok("get", "pod", "target", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"), "True");
  });

  test("--target=main shares main's PID namespace (its PID 1 is main's command); an ephemeral container that exits is not restarted", async () => {
    const r = await k.run(["debug", "target", "--image=busybox", "-c", "once", "--target=main", "--", "sh", "-c", 'tr "\\0" " " < /proc/1/cmdline; echo; exit 3']);
    assert.equal(r.code, 0, r.stderr);
    await eventually("once terminated", async () => (await statusOf("target", "once"))?.state.terminated !== undefined, 30_000);
    const s = (await statusOf("target", "once"))!;
    assert.deepEqual([s.state.terminated!.exitCode, s.restartCount], [3, 0]);
    const spec = JSON.parse(await k.ok("get", "pod", "target", "-o", "jsonpath={.spec.ephemeralContainers[?(@.name==\"once\")]}")) as { targetContainerName?: string };
    assert.equal(spec.targetContainerName, "main");
    const log = (await k.run(["logs", "target", "-c", "once"])).stdout;
    // Without root the embedded runtime has no namespaces at all: PID 1 is the host's init then.
    if (process.getuid?.() === 0) assert.match(log, new RegExp(`sleep ${TOKEN}`));
    // Some syncs later (an update wakes the pod's worker): still the one exit, no restart.
    await k.ok("annotate", "pod", "target", "poke=1");
    await eventually("status still terminated", async () => (await statusOf("target", "once"))?.restartCount === 0 && (await statusOf("target", "once"))?.state.terminated !== undefined, 10_000);
  });

  test("seccomp applies to an ephemeral container: a Localhost profile from --custom denies mkdir", async () => {
    mkdirSync(join(orch.dataDir, "nodeagent", "seccomp"), { recursive: true });
    writeFileSync(join(orch.dataDir, "nodeagent", "seccomp", "deny-mkdir.json"), JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 1 }] }));
    const custom = join(files, "custom.json");
    writeFileSync(custom, JSON.stringify({ securityContext: { seccompProfile: { type: "Localhost", localhostProfile: "deny-mkdir.json" } } }));
    const r = await k.run(["debug", "target", "--image=busybox", "-c", "sec", `--custom=${custom}`, "--", "sh", "-c", `mkdir ${files}/made 2>/dev/null && echo made || echo denied`]);
    assert.equal(r.code, 0, r.stderr);
    await eventually("sec terminated", async () => (await statusOf("target", "sec"))?.state.terminated !== undefined, 30_000);
    assert.equal((await k.run(["logs", "target", "-c", "sec"])).stdout, "denied\n");
  });

  test("kubectl debug -i adds the container with stdin and attaches: piped input reaches it; without stdinOnce (kubectl sets none) its input stays open", async () => {
    const r = await k.run(["debug", "target", "-i", "--image=busybox", "-c", "inter", "--", "sh", "-c", `while read -r l; do echo "read $l"; done; echo input-ended; sleep ${TOKEN}`], { input: "piped\n", timeoutMs: 20_000 });
    assert.match(r.stdout, /read piped/, r.stderr);
    await eventually("inter running", async () => (await statusOf("target", "inter"))?.state.running !== undefined, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.doesNotMatch((await k.run(["logs", "target", "-c", "inter"])).stdout, /input-ended/);
    const spec = JSON.parse(await k.ok("get", "pod", "target", "-o", "jsonpath={.spec.ephemeralContainers[?(@.name==\"inter\")]}")) as { stdin?: boolean; stdinOnce?: boolean };
    assert.deepEqual([spec.stdin, spec.stdinOnce], [true, undefined]);
  });

  test("a second kubectl debug under a taken name leaves the running debug container as it was", async () => {
    await eventually("dbg running", async () => (await statusOf("target", "dbg"))?.state.running !== undefined, 30_000);
    await k.run(["debug", "target", "--image=alpine", "-c", "dbg", "--", "true"]);
    const images = await k.ok("get", "pod", "target", "-o", "jsonpath={.spec.ephemeralContainers[?(@.name==\"dbg\")].image}");
    assert.equal(images, "busybox");
    const s = (await statusOf("target", "dbg"))!;
    assert.deepEqual([s.state.running !== undefined, s.restartCount], [true, 0]);
  });
});
