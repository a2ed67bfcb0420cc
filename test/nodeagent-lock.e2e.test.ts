// Two real `orch nodeagent` processes (standalone, embedded runtime, separate
// ports, one root dir) on one --lock-file with --exit-on-lock-contention: the
// holder exits and the second takes over, serving the certificate the first
// kept in the shared --cert-dir; an agent still waiting stops cleanly on SIGTERM.
// A plain open of the lock file by another process (`cat`, node's openSync)
// makes the holder exit as upstream's kubelet does (inotify IN_OPEN, through
// inotifywait); with inotifywait hidden from PATH the agent says so and only a
// touch asks it to go.
// (Without the flag, the second fails at once: src/cli/nodeagent.test.ts.)

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startComponent } from "./support/orch-process.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { presentedFingerprint } from "../src/component/testing/presented-cert.js";

const skip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's namespaces)" : undefined;
const dir = mkdtempSync(join(tmpdir(), "nodeagent-lock-e2e-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Agent flags sharing one root dir and lock file, no static pods from the host's /etc. */
function agentArgs(name: string, extra: string[]): string[] {
  const manifests = join(dir, "manifests");
  mkdirSync(manifests, { recursive: true });
  const config = join(dir, "config.yaml");
  writeFileSync(config, `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nstaticPodPath: ${manifests}\n`);
  return [
    `--config=${config}`, "--bind-address=127.0.0.1", "--port=0", `--root-dir=${join(dir, "root")}`,
    `--pod-logs-dir=${join(dir, "logs")}`, `--hostname-override=${name}`, `--lock-file=${join(dir, "nodeagent.lock")}`, ...extra,
  ];
}
const running = (p: { output(): string }) => eventually(() => (/running \(node /.test(p.output()) ? true : undefined), 20_000, "the agent running");

test("lock file: with --exit-on-lock-contention the holder exits saying why and the contender takes over", { skip }, async () => {
  const first = await startComponent("nodeagent", agentArgs("lock-c", ["--exit-on-lock-contention"]));
  await running(first);
  const firstCert = await presentedFingerprint(Number(new URL(first.url).port));
  const second = await startComponent("nodeagent", agentArgs("lock-d", ["--exit-on-lock-contention"]));
  try {
    assert.equal(await first.exited, 0, "the holder exits cleanly");
    assert.match(first.output(), /another agent asked for the lock file \S+nodeagent\.lock \(--exit-on-lock-contention\); exiting/);
    await running(second);
    assert.match(second.output(), /running \(node lock-d/);
    // One root dir, so one cert dir: the second agent serves the pair the first wrote (<root>/pki/nodeagent.crt|.key).
    assert.equal(await presentedFingerprint(Number(new URL(second.url).port)), firstCert, "the same serving certificate");
  } finally {
    await first.stop();
    await second.stop();
  }
});

test("lock file: an agent waiting for the lock with --exit-on-lock-contention stops cleanly on SIGTERM without starting", { skip }, async () => {
  // A holder that is no agent (never lets go when asked): util-linux flock on the same file.
  const lockFile = join(dir, "nodeagent.lock");
  const holder = spawn("flock", [lockFile, "sh", "-c", "echo held; exec cat"], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise((r) => holder.stdout!.once("data", r));
  try {
    const waiter = await startComponent("nodeagent", agentArgs("lock-e", ["--exit-on-lock-contention"]));
    await eventually(() => (/acquiring the lock file \S+ \(waiting while another agent holds it\)/.test(waiter.output()) ? true : undefined), 10_000, "the agent waiting");
    await waiter.stop();
    assert.equal(await waiter.exited, 0, waiter.output());
    assert.match(waiter.output(), /stopped before starting/);
    assert.doesNotMatch(waiter.output(), /running \(node /);
  } finally {
    holder.stdin!.end();
  }
});

const noInotify = existsSync("/usr/bin/inotifywait") ? undefined : "inotifywait not installed (apt-get install inotify-tools)";
const exitOf = (c: ReturnType<typeof spawn>) => new Promise<number | null>((r) => c.once("exit", (code) => r(code)));
const EXITING = /another agent asked for the lock file \S+nodeagent\.lock \(--exit-on-lock-contention\); exiting/;

test("lock file: a plain open by another process (cat, then node's openSync) makes the holder exit, as upstream's", { skip: skip ?? noInotify }, async () => {
  const lockFile = join(dir, "nodeagent.lock");
  const openers: [string, () => ReturnType<typeof spawn>][] = [
    ["cat", () => spawn("cat", [lockFile])],
    ["node openSync", () => spawn(process.execPath, ["-e", `const fs = require("node:fs"); fs.closeSync(fs.openSync(${JSON.stringify(lockFile)}, "r"))`])],
  ];
  for (const [what, open] of openers) {
    const agent = await startComponent("nodeagent", agentArgs("lock-open", ["--exit-on-lock-contention"]));
    try {
      await running(agent);
      assert.match(agent.output(), /watching the lock file \S+nodeagent\.lock for another process's open \(inotifywait\)/);
      assert.equal(await exitOf(open()), 0, what);
      assert.equal(await agent.exited, 0, `${what}: the holder exits cleanly\n${agent.output()}`);
      assert.match(agent.output(), EXITING, what);
    } finally {
      await agent.stop();
    }
  }
});

test("lock file: with inotifywait hidden from PATH the agent logs the fallback; a plain open is not noticed, a touch is", { skip }, async () => {
  // PATH without inotifywait: every other program of /usr/bin linked into a folder of our own (/bin is /usr/bin here).
  const bin = join(dir, "bin-without-inotifywait");
  mkdirSync(bin, { recursive: true });
  for (const name of readdirSync("/usr/bin")) if (!name.startsWith("inotify")) symlinkSync(join("/usr/bin", name), join(bin, name));
  const saved = process.env["PATH"];
  process.env["PATH"] = [bin, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/sbin"].join(":");
  let agent: Awaited<ReturnType<typeof startComponent>>;
  try {
    agent = await startComponent("nodeagent", agentArgs("lock-fallback", ["--exit-on-lock-contention"]));
  } finally {
    process.env["PATH"] = saved;
  }
  try {
    await running(agent);
    assert.match(agent.output(), /inotifywait not found on PATH \(Debian's inotify-tools\); watching the lock file \S+nodeagent\.lock for changes only/);
    const lockFile = join(dir, "nodeagent.lock");
    assert.equal(await exitOf(spawn("cat", [lockFile])), 0);
    await new Promise((r) => setTimeout(r, 1000));
    assert.doesNotMatch(agent.output(), EXITING, "a plain open is not noticed by the fallback");
    const now = new Date();
    utimesSync(lockFile, now, now);
    assert.equal(await agent.exited, 0, agent.output());
    assert.match(agent.output(), EXITING);
  } finally {
    await agent.stop();
  }
});
