// lmdb-specific guarantees: acknowledged writes survive kill -9, revisions
// continue upward after a reopen, and a damaged or foreign file is refused
// without being touched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { open } from "lmdb";
import { StorageError } from "../errors.js";
import { LmdbStorage } from "./lmdb-storage.js";
import { STORE_FILE } from "./store-file.js";

const tmp = () => mkdtempSync(join(tmpdir(), "orch-lmdb-"));
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

test("every acknowledged write survives kill -9 and revisions continue upward", async () => {
  const dir = tmp();
  try {
    const writer = fileURLToPath(new URL("./testing/crash-writer.js", import.meta.url));
    const child = spawn(process.execPath, [writer, dir], { stdio: ["ignore", "pipe", "inherit"] });
    const acked = new Map<string, number>();
    let buffer = "";
    await new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", () => resolve());
      child.stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const [word, key, rev] = buffer.slice(0, nl).split(" ");
          buffer = buffer.slice(nl + 1);
          if (word === "ack") acked.set(key!, Number(rev));
        }
        // Kill in the middle of the burst, while writes are in flight.
        if (acked.size >= 3000 && child.exitCode === null && !child.killed) child.kill("SIGKILL");
      });
    });
    assert.equal(child.signalCode, "SIGKILL");
    assert.ok(acked.size >= 3000, `saw ${acked.size} acknowledgements`);

    const store = await LmdbStorage.open({ dataDir: dir });
    try {
      let maxAcked = 0;
      for (const [key, rev] of acked) {
        const got = await store.get(key);
        assert.ok(got.kv !== undefined, `acknowledged ${key} is missing after the crash`);
        assert.equal(got.kv.modRevision, rev);
        maxAcked = Math.max(maxAcked, rev);
      }
      const after = await store.create("/crash/after", new Uint8Array([1]));
      assert.ok(after.modRevision > maxAcked, "revisions continue upward after a crash");
      const listed = await store.list("/crash/");
      assert.ok(listed.items.length >= acked.size);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("reopening keeps data, revision and compaction state", async () => {
  const dir = tmp();
  try {
    const first = await LmdbStorage.open({ dataDir: dir });
    const a = await first.create("/k/a", new TextEncoder().encode("1"));
    const a2 = await first.update("/k/a", new TextEncoder().encode("2"), a.modRevision);
    await first.compact(a2.modRevision);
    await first.close();
    const second = await LmdbStorage.open({ dataDir: dir });
    try {
      assert.equal(await second.currentRevision(), a2.modRevision);
      assert.equal(new TextDecoder().decode((await second.get("/k/a")).kv!.value), "2");
      assert.equal((await second.stats()).compactedRevision, a2.modRevision);
      await assert.rejects(second.get("/k/a", { revision: a.modRevision }), /compacted/);
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a damaged file fails start-up with a message naming it and is never overwritten", async () => {
  const dir = tmp();
  try {
    const path = join(dir, STORE_FILE);
    writeFileSync(path, Buffer.from("this is not a database, but someone's notes\n".repeat(200)));
    const before = sha(path);
    const err = await LmdbStorage.open({ dataDir: dir }).then(
      () => assert.fail("opened a damaged file"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof StorageError);
    assert.ok(err.message.includes(path), `message names the file: ${err.message}`);
    assert.equal(sha(path), before, "the file is unchanged");

    writeFileSync(path, "");
    await assert.rejects(LmdbStorage.open({ dataDir: dir }), (e: Error) => e.message.includes(path));
    assert.equal(readFileSync(path).length, 0, "an empty file is not initialised either");

    rmSync(path);
    mkdirSync(path);
    await assert.rejects(LmdbStorage.open({ dataDir: dir }), /not a regular file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an lmdb file written by another program is refused and left intact", async () => {
  const dir = tmp();
  try {
    const path = join(dir, STORE_FILE);
    const foreign = open({ path, noSubdir: true });
    await foreign.put("someone-else", { data: 42 });
    await foreign.close();
    const before = sha(path);
    await assert.rejects(LmdbStorage.open({ dataDir: dir }), (e: Error) => e.message.includes(path));
    assert.equal(sha(path), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("compaction runs in batches: writers are not held up behind a large compaction", async () => {
  const dir = tmp();
  const store = await LmdbStorage.open({ dataDir: dir, compactionBatch: 50 });
  try {
    let kv = await store.create("/hot", new Uint8Array(100));
    for (let i = 0; i < 3000; i++) {
      kv = await store.update("/hot", new Uint8Array(100).fill(i % 256), kv.modRevision);
    }
    const compaction = store.compact(kv.modRevision);
    let compactionDone = false;
    void compaction.then(() => (compactionDone = true));
    // A write issued while the compaction runs completes before the compaction does.
    const during = await store.create("/during", new Uint8Array([1]));
    assert.equal(compactionDone, false, "the write waited for the whole compaction");
    await compaction;
    assert.equal((await store.get("/hot")).kv!.modRevision, kv.modRevision);
    assert.ok(during.modRevision > kv.modRevision);
    const sizeAfter = (await store.stats()).sizeBytes;
    for (let i = 0; i < 3000; i++) {
      kv = await store.update("/hot", new Uint8Array(100).fill(i % 256), kv.modRevision);
    }
    await store.compact(kv.modRevision);
    // Freed pages are reused: a second round of the same churn does not double the file.
    assert.ok((await store.stats()).sizeBytes < sizeAfter * 1.5, "the file does not keep growing");
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
