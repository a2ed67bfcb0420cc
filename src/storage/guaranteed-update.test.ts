// guaranteedUpdate's reads: a suggestion that is current saves the read of the
// key; without one (or once it proves stale) the key is read. The retry rules
// themselves are in the shared suite (testing/storage.case.ts).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guaranteedUpdate } from "./guaranteed-update.js";
import { LmdbStorage } from "./lmdb/index.js";
import type { Storage } from "./storage.js";

const bytes = (s: string) => new TextEncoder().encode(s);

test("a current suggestion saves the read; none, or a stale one, costs one", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-guaranteed-update-"));
  const lmdb = await LmdbStorage.open({ dataDir: dir });
  try {
    let reads = 0;
    const store: Pick<Storage, "get" | "create" | "update" | "delete"> = {
      get: (key, options) => (reads++, lmdb.get(key, options)),
      create: (key, value) => lmdb.create(key, value),
      update: (key, value, rev) => lmdb.update(key, value, rev),
      delete: (key, options) => lmdb.delete(key, options),
    };
    const a1 = await lmdb.create("/k", bytes("1"));
    const a2 = (await guaranteedUpdate(store, "/k", () => bytes("2"), { suggestion: a1 })).kv!;
    assert.equal(reads, 0, "current suggestion: no read");
    await guaranteedUpdate(store, "/k", () => bytes("3"));
    assert.equal(reads, 1, "no suggestion: one read");
    reads = 0;
    const out = await guaranteedUpdate(store, "/k", () => undefined, { suggestion: a2 });
    assert.equal(reads, 1, "a no-op on a suggestion is confirmed by a read");
    assert.equal(new TextDecoder().decode(out.kv!.value), "3", "and answered with the stored value");
  } finally {
    await lmdb.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
