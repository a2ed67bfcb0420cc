import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LockContentionError, acquireLockFile } from "./lock-file.js";

test("lock file: a second agent on the same lock fails with a clear error; after release it may take it", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "nodeagent-lock-")), "nodeagent.lock");
  const first = await acquireLockFile({ path });
  await assert.rejects(acquireLockFile({ path }), (err: unknown) => err instanceof LockContentionError && /held by another node agent/.test((err as Error).message));
  await first.release();
  const again = await acquireLockFile({ path });
  await again.release();
});

test("lock file: the holder hears contention (for --exit-on-lock-contention)", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "nodeagent-lock-")), "nodeagent.lock");
  let told!: () => void;
  const contention = new Promise<void>((r) => (told = r));
  const holder = await acquireLockFile({ path, onContention: () => told() });
  const waiter = acquireLockFile({ path, wait: true });
  await contention;
  await holder.release();
  await (await waiter).release();
});

test("lock file: a waiting agent stopped (signal) gives up the wait with the signal's reason", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "nodeagent-lock-")), "nodeagent.lock");
  const holder = await acquireLockFile({ path });
  const stop = new AbortController();
  const waiter = acquireLockFile({ path, wait: true, signal: stop.signal });
  stop.abort(new Error("stopped while waiting"));
  await assert.rejects(waiter, /stopped while waiting/);
  await holder.release();
});
