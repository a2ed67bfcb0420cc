// End to end: `kubectl attach -it` and `kubectl debug -it` with a real
// terminal against a real `orch server`, on the embedded runtime and on a
// private containerd (there the agent carries the session to containerd's
// streaming server: src/nodeagent/exec/cri-attach-relay.ts), with kubectl 1.33
// (WebSocket) and 1.27 (SPDY/3.1). kubectl needs a terminal for -t: it runs
// under util-linux's `script`, whose pseudo-terminal is kubectl's; the test
// types into script's stdin and reads what kubectl prints. A resize is a
// `stty -F` on kubectl's terminal (the kernel sends kubectl SIGWINCH, and
// kubectl sends the new size). What the container sees is checked with
// `stty size` inside it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { NODE_RUNTIMES, runtimeSkipReason, startOrchOn, type OrchOnRuntime } from "./support/orch-on-runtime.js";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlPath, kubectlSkipReason } from "./support/kubectl.js";
import type { OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-attach-it-"));
const TOKEN = suiteToken(730_000);
const SCRIPT = ["/usr/bin/script", "/bin/script"].find(existsSync);
const skip = kubectlSkipReason() ?? (SCRIPT === undefined ? "util-linux script is not installed" : kubectlPath("1.27") === undefined ? "kubectl.1.27 is not installed" : false);

/** A kubectl under `script`: a terminal of `rows`×`cols` from the start. */
interface TerminalSession {
  child: ChildProcess;
  output(): string;
  type(text: string): void;
  /** Resizes kubectl's terminal. */
  resize(rows: number, cols: number): Promise<void>;
  exited: Promise<number>;
  stop(): Promise<void>;
}

const shq = (w: string): string => `'${w.replace(/'/g, `'\\''`)}'`;

function underTerminal(version: string, kubeconfig: string, args: string[], rows = 30, cols = 100): TerminalSession {
  const kubectl = kubectlPath(version)!;
  const cmd = `stty rows ${rows} cols ${cols}; exec ${[kubectl, "--kubeconfig", kubeconfig, ...args].map(shq).join(" ")}`;
  const child = spawn(SCRIPT!, ["-qfec", cmd, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number>((r) => child.once("exit", (code) => r(code ?? -1)));
  // The kubectl process: script's child, found by its command line.
  const kubectlPid = async (): Promise<number> => {
    let pid: number | undefined;
    await eventually("kubectl under script", async () => {
      const pids = await new Promise<string>((r) => execFile("pgrep", ["-P", String(child.pid)], (_e, so) => r(so)));
      pid = pids.split("\n").map(Number).find((p) => p > 0);
      return pid !== undefined;
    }, 10_000);
    return pid!;
  };
  return {
    child,
    output: () => out,
    type: (text) => child.stdin!.write(text),
    async resize(r, c) {
      const tty = readlinkSync(`/proc/${await kubectlPid()}/fd/0`);
      await new Promise<void>((res, rej) => execFile("stty", ["-F", tty, "rows", String(r), "cols", String(c)], (e) => (e ? rej(e) : res())));
    },
    exited,
    async stop() {
      const pid = await kubectlPid().catch(() => undefined);
      if (pid !== undefined) process.kill(pid, "SIGTERM");
      child.stdin!.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      child.kill("SIGKILL");
    },
  };
}

for (const runtime of NODE_RUNTIMES) describe(`kubectl attach -it and debug -it against orch server (${runtime} runtime)`, { skip: skip || runtimeSkipReason(runtime) }, () => {
  let orch: OrchProcess;
  let server: OrchOnRuntime | undefined;
  let k: Kubectl;
  const podJson = async (pod: string) => JSON.parse(await k.ok("get", "pod", pod, "-o", "json")) as {
    status: { containerStatuses?: { name: string; restartCount: number; state: { running?: object } }[]; ephemeralContainerStatuses?: { name: string; state: { running?: object; terminated?: { exitCode: number } } }[] };
  };

  before(async () => {
    server = await startOrchOn(runtime, ["--node-name=attach-it"]);
    orch = server.orch;
    k = new Kubectl(orch.kubeconfig);
    const path = join(files, "pods.yaml");
    writeFileSync(path, [
      // Reads lines from its terminal and answers each with the terminal's size as it sees it.
      `apiVersion: v1\nkind: Pod\nmetadata: {name: shell}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox:1.36\n    stdin: true\n    tty: true\n    command: [sh, -c, 'while read -r l; do echo "got $l size $(stty size)"; done; : ${TOKEN}']\n`,
      // stdinOnce without a terminal: says eof when its input ends, then stays.
      `apiVersion: v1\nkind: Pod\nmetadata: {name: once}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox:1.36\n    stdin: true\n    stdinOnce: true\n    command: [sh, -c, 'while read -r l; do echo "got $l"; done; echo eof; sleep ${TOKEN}']\n`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: keep}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox:1.36\n    stdin: true\n    command: [sh, -c, 'while read -r l; do echo "got $l"; done; echo eof; sleep ${TOKEN}']\n`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: main, image: busybox:1.36, command: [sh, -c, "sleep ${TOKEN}"]}\n`,
    ].join("---\n"));
    await k.ok("create", "-f", path);
    await k.ok("wait", "--for=condition=Ready", "pod/shell", "pod/once", "pod/keep", "pod/plain", "--timeout=60s");
  });
  after(async () => {
    await server?.stop();
    await killMatching(String(TOKEN));
  });

  for (const [version, transport] of [["1.33", "WebSocket"], ["1.27", "SPDY"]] as const) {
    test(`kubectl ${version} attach -it (${transport}): keystrokes reach the process, its answers come back, a resize changes stty size, detaching leaves it running`, async () => {
      const word = `w${version.replace(".", "")}`;
      const s = underTerminal(version, orch.kubeconfig, ["attach", "-it", "shell"]);
      try {
        await eventually("kubectl attached", async () => /If you don't see a command prompt/.test(s.output()), 20_000);
        // The first size goes with the attach; give it a moment to land before typing.
        await new Promise((r) => setTimeout(r, 500));
        s.type(`${word}a\r`);
        await eventually(`${word}a answered with 30 100`, async () => new RegExp(`got ${word}a size 30 100`).test(s.output()), 15_000);
        await s.resize(40, 120);
        await new Promise((r) => setTimeout(r, 500));
        s.type(`${word}b\r`);
        await eventually(`${word}b answered with 40 120`, async () => new RegExp(`got ${word}b size 40 120`).test(s.output()), 15_000);
      } finally {
        await s.stop();
      }
      // Detached: the container still runs, never restarted, and its log holds the session.
      const st = (await podJson("shell")).status.containerStatuses!.find((c) => c.name === "main")!;
      assert.ok(st.state.running !== undefined, "still running after the detach");
      assert.equal(st.restartCount, 0);
      assert.match(await k.ok("logs", "shell"), new RegExp(`got ${word}b size 40 120`));
    });
  }

  test("stdinOnce: the container's stdin ends when the first attach's input ends; without stdinOnce it stays open for the next attach", async () => {
    // stdinOnce: the input ends with kubectl's (kubectl attach -i keeps following the output after its input ends: it is
    // stopped by a timeout, 8 s as the machine may be loaded).
    const r = await new Kubectl(orch.kubeconfig, "1.33").run(["attach", "-i", "once"], { input: "first-1.33\n", timeoutMs: 8000 });
    assert.match(r.stdout, /got first-1\.33/, r.stderr);
    await eventually("once says eof", async () => /eof/.test(await k.ok("logs", "once")), 10_000);
    // Without stdinOnce, kubectl's input is kept open while the answer is awaited: containerd (as under upstream's
    // kubelet) detaches an attach's output as soon as its input ends, so a closed input could miss the answer there.
    const attachOpen = async (version: string, line: string) => {
      const child = spawn(kubectlPath(version)!, ["--kubeconfig", orch.kubeconfig, "attach", "-i", "keep"], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
      try {
        await new Promise((res) => setTimeout(res, 1000));
        child.stdin!.write(`${line}\n`);
        await eventually(`keep answers ${line}`, async () => out.includes(`got ${line}`), 15_000).catch((err: Error) => assert.fail(`${err.message}: ${out}`));
      } finally {
        child.kill("SIGTERM");
      }
    };
    await attachOpen("1.27", "first-1.27");
    assert.doesNotMatch(await k.ok("logs", "keep"), /eof/, "stdin stays open without stdinOnce");
    await attachOpen("1.33", "second");
    assert.equal((await podJson("once")).status.containerStatuses![0]!.restartCount, 0);
  });

  test("attach -i to a container started without stdin is refused with the reason", async () => {
    const r = await k.run(["attach", "-i", "plain"], { input: "x\n", timeoutMs: 10_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /container main was not started with stdin \(spec\.stdin is false\), leave out -i/);
  });

  test("kubectl debug -it --target=main: the ephemeral container starts with a terminal, kubectl waits for it and attaches; typed commands run in main's PID namespace", async () => {
    const s = underTerminal("1.33", orch.kubeconfig, ["debug", "-it", "plain", "--image=busybox:1.36", "--target=main", "-c", "dbg", "--", "sh"]);
    try {
      await eventually("kubectl attached to dbg", async () => /If you don't see a command prompt/.test(s.output()), 40_000);
      await new Promise((r) => setTimeout(r, 500));
      s.type("echo answer-$((6*7)); tr '\\0' ' ' < /proc/1/cmdline; echo; stty size\r");
      await eventually("the answer", async () => /answer-42/.test(s.output()), 15_000);
      await eventually("main's command as PID 1 and the size", async () => new RegExp(`sleep ${TOKEN}`).test(s.output()) && /\b30 100\b/.test(s.output()), 15_000);
      s.type("exit 5\r");
      // kubectl ends with the session (it reports no exit code for an attach).
      assert.notEqual(await Promise.race([s.exited, new Promise<number>((r) => setTimeout(() => r(-99), 20_000))]), -99, `kubectl ends with the shell: ${s.output()}`);
    } finally {
      await s.stop();
    }
    const eph = (await podJson("plain")).status.ephemeralContainerStatuses!.find((c) => c.name === "dbg")!;
    assert.equal(eph.state.terminated?.exitCode, 5, JSON.stringify(eph) + (await k.run(["logs", "plain", "-c", "dbg"])).stdout);
    const spec = JSON.parse(await k.ok("get", "pod", "plain", "-o", "jsonpath={.spec.ephemeralContainers[0]}")) as { stdin?: boolean; tty?: boolean; targetContainerName?: string };
    assert.deepEqual([spec.stdin, spec.tty, spec.targetContainerName], [true, true, "main"]);
  });
});

after(() => rmSync(files, { recursive: true, force: true, maxRetries: 10 }));
