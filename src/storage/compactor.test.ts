import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactedError } from "./errors.js";
import { LmdbStorage } from "./lmdb/index.js";
import { startCompactor } from "./compactor.js";

test("each tick compacts to the revision seen one tick earlier", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-compactor-"));
  const store = await LmdbStorage.open({ dataDir: dir });
  const compactor = startCompactor(store, { intervalMs: 0 });
  try {
    const a = await store.create("/a", new Uint8Array([1]));
    await compactor.tick(); // remembers a's revision, compacts nothing
    assert.equal((await store.stats()).compactedRevision, 0);
    const b = await store.update("/a", new Uint8Array([2]), a.modRevision);
    await store.update("/a", new Uint8Array([3]), b.modRevision);
    await compactor.tick(); // compacts to a's revision
    assert.equal((await store.stats()).compactedRevision, a.modRevision);
    assert.ok((await store.get("/a", { revision: b.modRevision })).kv, "one interval of history stays");
    await compactor.tick();
    await assert.rejects(store.get("/a", { revision: b.modRevision }), CompactedError);
  } finally {
    compactor.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
