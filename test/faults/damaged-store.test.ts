// Fault: a damaged embedded store (issue 18, point 5; docs/reliability.md,
// "Damaged store"). Real `orch apiserver` and `orch snapshot` processes, real
// kubectl 1.33: a snapshot saved while a writer runs restores into a new data
// folder the server starts on, with every write acknowledged before the save;
// a value damaged in the file reads as the corrupt object (500 naming it, the
// log says how to restore) and the unsafe delete removes it; a truncated
// store stops the start with a message and exit code 1, not a bus error.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kubectl, kubectlSkipReason } from "../support/kubectl.js";
import { startOrch, type OrchProcess } from "../support/orch-process.js";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));
const GATE = "--feature-gates=AllowUnsafeMalformedObjectDeletion=true";
const skip = kubectlSkipReason();

function orchSync(...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000 });
}

/** An HTTPS call with the admin token (the unsafe delete has no kubectl 1.33 flag). */
function call(orch: OrchProcess, method: string, path: string, body?: unknown): Promise<{ status: number; json: { message?: string; reason?: string } }> {
  const token = readFileSync(join(orch.dataDir, "admin.token"), "utf8").trim();
  const ca = readFileSync(join(orch.dataDir, "ca.crt"));
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) }) };
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, orch.url), { method, ca, headers }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: text.startsWith("{") ? JSON.parse(text) : { message: text } }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

describe("a damaged embedded store", { skip, timeout: 240_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), "orch-fault-damaged-"));
  let orch: OrchProcess | undefined;
  after(async () => {
    await orch?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("a snapshot saved while writing restores into a new folder the server starts on", async () => {
    const dataDir = join(root, "live");
    orch = await startOrch("apiserver", [], { dataDir });
    const k = new Kubectl(orch.kubeconfig);
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing && i < 400; i++) {
        const r = await call(orch!, "POST", "/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `w-${i}` }, data: { i: String(i) } });
        assert.equal(r.status, 201, JSON.stringify(r.json));
        acknowledged.push(`w-${i}`);
      }
    })();
    await new Promise((r) => setTimeout(r, 1500));
    const before = [...acknowledged];
    const file = join(root, "snap.mdb");
    const save = orchSync("snapshot", "save", file, "--data-dir", dataDir);
    writing = false;
    await writer;
    assert.equal(save.status, 0, save.stderr);
    assert.match(save.stdout, /saved .* into .*snap\.mdb: revision \d+, \d+ keys, \d+ values checked, 0 damaged/);
    assert.ok(before.length > 0, "the writer wrote before the save");
    assert.equal((statSync(file).mode & 0o777).toString(8), "600");
    await orch.stop();
    orch = undefined;

    const restored = join(root, "restored");
    const restore = orchSync("snapshot", "restore", file, "--data-dir", restored);
    assert.equal(restore.status, 0, restore.stderr);
    assert.match(restore.stdout, /restored .* 0 damaged/);
    const again = orchSync("snapshot", "restore", file, "--data-dir", restored);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /store\.mdb exists; stop the server and move it away before restoring/);

    orch = await startOrch("apiserver", [], { dataDir: restored });
    const names = (await new Kubectl(orch.kubeconfig).ok("get", "configmaps", "-o", "name")).split("\n");
    for (const name of before) assert.ok(names.includes(`configmap/${name}`), `${name}, acknowledged before the save, is in the snapshot`);
    void k;
    await orch.stop();
    orch = undefined;
  });

  test("a damaged value reads as the corrupt object, the log says how to restore, the unsafe delete removes it", async () => {
    const dataDir = join(root, "damaged");
    // Random, so the store's compression (LZ4, which copies what it cannot match verbatim) leaves it as it is.
    const marker = `ORCH${randomBytes(20).toString("hex").toUpperCase()}`;
    orch = await startOrch("apiserver", [GATE], { dataDir });
    const k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "configmap", "victim", `--from-literal=a=${marker}`);
    await k.ok("create", "configmap", "neighbour", "--from-literal=a=b");
    await orch.stop();
    // Flip one byte inside the value wherever the file holds it (the live page and any stale copy).
    const path = join(dataDir, "store.mdb");
    const bytes = readFileSync(path);
    let hits = 0;
    for (let at = bytes.indexOf(marker); at >= 0; at = bytes.indexOf(marker, at + 1)) {
      bytes[at + 5] = "X".charCodeAt(0);
      hits++;
    }
    assert.ok(hits > 0, "the value is in the file");
    writeFileSync(path, bytes);

    orch = await startOrch("apiserver", [GATE], { dataDir });
    const k2 = new Kubectl(orch.kubeconfig);
    const get = await k2.run(["get", "configmap", "victim"]);
    assert.notEqual(get.code, 0);
    assert.match(get.stderr, /corrupt object, Key: \/registry\/core\/configmaps\/default\/victim.*fails its checksum/);
    assert.match(await k2.ok("get", "configmap", "neighbour", "-o", "name"), /configmap\/neighbour/);
    assert.match(orch.output(), /fails its checksum: the store .* is damaged; .*orch snapshot restore/);
    const raw = await call(orch, "GET", "/api/v1/namespaces/default/configmaps/victim");
    assert.equal(raw.status, 500);
    const del = await call(orch, "DELETE", "/api/v1/namespaces/default/configmaps/victim", { ignoreStoreReadErrorWithClusterBreakingPotential: true });
    assert.equal(del.status, 200, JSON.stringify(del.json));
    assert.equal((await call(orch, "GET", "/api/v1/namespaces/default/configmaps/victim")).status, 404);
    await orch.stop();
    orch = undefined;
  });

  test("a truncated store stops the start with what is wrong and how to restore, exit code 1, no bus error", async () => {
    const dataDir = join(root, "truncated");
    orch = await startOrch("apiserver", [], { dataDir });
    const k = new Kubectl(orch.kubeconfig);
    for (let i = 0; i < 20; i++) await k.ok("create", "configmap", `c-${i}`, `--from-literal=a=${"x".repeat(20_000)}`);
    await orch.stop();
    orch = undefined;
    const path = join(dataDir, "store.mdb");
    copyFileSync(path, join(root, "before-truncation.mdb"));
    truncateSync(path, Math.floor(statSync(path).size / 3));
    const start = Date.now();
    const r = orchSync("apiserver", "--data-dir", dataDir, "--secure-port", "0");
    assert.equal(r.signal, null, `ended by ${r.signal}: ${r.stderr}`);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /store .*store\.mdb is damaged: it is \d+ bytes, but its last committed page ends at byte \d+ \(truncated\); refusing to open it/);
    assert.match(r.stderr, /orch snapshot restore SNAPSHOT --data-dir/);
    assert.ok(Date.now() - start < 30_000);
    // The snapshot tool refuses it the same way.
    const save = orchSync("snapshot", "save", join(root, "from-truncated.mdb"), "--data-dir", dataDir);
    assert.equal(save.status, 1);
    assert.match(save.stderr, /truncated/);
  });
});
