// Fault: the disk under the embedded store fills up (issue 18, point 1;
// docs/reliability.md, "Disk full"). A real `orch apiserver` on a 24 MiB
// tmpfs, real kubectl 1.33: writes are refused with 507 and the reason, reads
// and a running watch go on, /readyz's storage-space check fails with why, the
// process stays up, a restart on the full disk serves read-only, and writes
// resume by themselves once space is freed (the time it takes is printed).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "../support/kubectl.js";
import { startOrch, type OrchProcess } from "../support/orch-process.js";

const skip = process.getuid?.() !== 0 ? "needs root to mount a tmpfs" : kubectlSkipReason();
if (skip !== undefined) console.log(`# disk-full: skipped: ${skip}`);

describe("a full disk under the embedded store", { skip, timeout: 180_000 }, () => {
  const mnt = mkdtempSync(join(tmpdir(), "orch-fault-disk-"));
  const dataDir = join(mnt, "data");
  const filler = join(mnt, "filler");
  const payload = join(tmpdir(), `orch-fault-disk-payload-${process.pid}`);
  let orch: OrchProcess;
  let k: Kubectl;

  before(async () => {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mnt]);
    mkdirSync(dataDir);
    // Random (base64): the store compresses its values, and 300 KB of one letter would take a few hundred bytes.
    writeFileSync(payload, randomBytes(225_000).toString("base64"));
    orch = await startOrch("apiserver", [], { dataDir });
    k = new Kubectl(orch.kubeconfig);
  });

  after(async () => {
    await orch?.stop();
    try {
      execFileSync("umount", ["-l", mnt]);
    } catch {
      // not mounted (the before hook failed early)
    }
    rmSync(mnt, { recursive: true, force: true });
    rmSync(payload, { force: true });
  });

  /** `kubectl create configmap NAME` with a 300 KB value, -v=6 so the response status is in stderr. */
  const createBig = (name: string) => k.run(["create", "configmap", name, `--from-file=a=${payload}`, "-v=6"]);

  test("writes are refused with 507, reads and watches go on, /readyz says why, writes resume once space is back", async () => {
    await k.ok("create", "configmap", "before", "--from-literal=a=b");
    const watch = k.spawn(["get", "configmaps", "--watch", "-o", "name"]);
    // Leave about 3 MiB: a few large writes fit, then the store runs out.
    const free = () => { const s = statfsSync(mnt); return s.bavail * s.bsize; };
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 3 * 1024 * 1024)));
    let refused: { name: string; stderr: string } | undefined;
    const accepted: string[] = [];
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const r = await createBig(`big-${i}`);
      if (r.code === 0) accepted.push(`big-${i}`);
      else refused = { name: `big-${i}`, stderr: r.stderr };
    }
    assert.ok(refused !== undefined, "a write on the full disk was refused");
    assert.match(refused.stderr, /507 Insufficient Storage/);
    assert.match(refused.stderr, /storage is full: no space left for the store under .*writes are refused until space is freed/);
    // The process stays up; reads (get, list) and the running watch go on.
    assert.equal(process.kill(orch.pid, 0), true);
    assert.match(await k.ok("get", "configmap", "before", "-o", "name"), /configmap\/before/);
    const listed = await k.ok("get", "configmaps", "-o", "name");
    for (const name of accepted) assert.match(listed, new RegExp(`configmap/${name}\\b`));
    const last = new RegExp(`configmap/${accepted.at(-1) ?? "before"}\\b`);
    await eventually("the watch to see the last accepted write", () => last.test(watch.output()), 10_000);
    // Small writes are refused too while the disk is full (one rule, no partial luck).
    const small = await k.run(["create", "configmap", "small", "--from-literal=a=b"]);
    assert.notEqual(small.code, 0);
    // /readyz names the failing check; its own path says why.
    const readyz = await k.run(["get", "--raw", "/readyz?verbose"]);
    assert.notEqual(readyz.code, 0);
    assert.match(readyz.stderr, /\[-\]storage-space failed/);
    const check = await k.run(["get", "--raw", "/readyz/storage-space"]);
    assert.match(check.stderr, /no space left for the store/);
    assert.match(orch.output(), /store: no space left for the store under/);
    assert.doesNotMatch(orch.output(), /Commit failed|unhandled/i);

    // A restart on the full disk serves, read-only.
    await orch.stop();
    watch.child.kill();
    orch = await startOrch("apiserver", [], { dataDir });
    k = new Kubectl(orch.kubeconfig);
    assert.match(await k.ok("get", "configmap", "before", "-o", "name"), /configmap\/before/);
    const again = await createBig("after-restart");
    assert.match(again.stderr, /507 Insufficient Storage/);

    // Space comes back: writes resume by themselves, and /readyz is ready again.
    const freedAt = Date.now();
    rmSync(filler);
    let resumedMs = -1;
    await eventually("a write to succeed once space is back", async () => {
      const r = await k.run(["create", "configmap", "resumed", "--from-literal=a=b"]);
      if (r.code !== 0) return false;
      resumedMs = Date.now() - freedAt;
      return true;
    }, 10_000);
    console.log(`# disk-full: writes resumed ${resumedMs} ms after space was freed`);
    assert.equal((await k.run(["get", "--raw", "/readyz"])).code, 0);
    assert.equal((await createBig("big-after")).code, 0);
    assert.match(orch.output(), /writes resume/);
  });
});
