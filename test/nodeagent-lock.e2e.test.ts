// Two real `orch nodeagent` processes (standalone, embedded runtime, separate
// ports, one root dir) on one --lock-file with --exit-on-lock-contention: the
// holder exits and the second takes over, serving the certificate the first
// kept in the shared --cert-dir; an agent still waiting stops cleanly on SIGTERM.
// (Without the flag, the second fails at once: src/cli/nodeagent.test.ts.)

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
