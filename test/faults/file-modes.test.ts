// Fault: secrets and the store readable by others, an empty admin token
// (issue 18, points 6 and 7; docs/reliability.md, "Files and secrets on disk").
// Real `orch apiserver` processes: a data folder that existed as 0755 with a
// 0644 store and admin.token comes out 0700 / 0600 after a start; an empty
// admin.token stops the start with a message and a non-zero exit code.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOrch } from "../support/orch-process.js";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("files and secrets on disk", { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  const newDir = () => {
    const d = mkdtempSync(join(tmpdir(), "orch-fault-modes-"));
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("the data folder becomes 0700, the store, its lock and the secrets 0600, whatever they were", async () => {
    const dataDir = newDir();
    chmodSync(dataDir, 0o755);
    let orch = await startOrch("apiserver", [], { dataDir });
    await orch.stop();
    // Loosen everything as an old version or an operator's copy would have left it.
    chmodSync(dataDir, 0o755);
    for (const f of ["store.mdb", "store.mdb-lock", "admin.token", "ca.key", "apiserver.key"]) chmodSync(join(dataDir, f), 0o644);
    orch = await startOrch("apiserver", [], { dataDir });
    try {
      assert.equal(mode(dataDir), "700");
      for (const f of ["store.mdb", "store.mdb-lock", "admin.token", "ca.key", "apiserver.key", "apiserver-nodeagent-client.key"]) {
        assert.equal(mode(join(dataDir, f)), "600", f);
      }
      assert.doesNotMatch(orch.output(), /warning: cannot make/);
    } finally {
      await orch.stop();
    }
  });

  test("an empty admin.token stops the start with a message, not a server nobody can use", () => {
    const dataDir = newDir();
    writeFileSync(join(dataDir, "admin.token"), "\n", { mode: 0o600 });
    const r = spawnSync(process.execPath, [BIN, "apiserver", "--data-dir", dataDir, "--secure-port", "0"], { encoding: "utf8", timeout: 30_000 });
    assert.notEqual(r.status, 0, r.stderr);
    assert.equal(r.signal, null);
    assert.match(r.stderr, /admin\.token is empty: no client could authenticate as admin; remove the file to have a new token made, or write a token into it/);
  });
});
