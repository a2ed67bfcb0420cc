import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, utimesSync } from "node:fs";
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

// Contention by a plain open (upstream's IN_OPEN), heard through inotifywait; without it, the fs.watch fallback.
const inotifywait = ["/usr/bin/inotifywait", "/bin/inotifywait"].some((p) => existsSync(p));
const noInotify = inotifywait ? undefined : "inotifywait not installed (apt-get install inotify-tools)";
if (noInotify) console.log(`# skipping the open-contention tests: ${noInotify}`);

/** Holds a fresh lock with onContention; `heard` resolves on contention; `lines` collects the log. */
async function holder(searchPath?: string) {
  const path = join(mkdtempSync(join(tmpdir(), "nodeagent-lock-")), "nodeagent.lock");
  let count = 0;
  let told!: () => void;
  const heard = new Promise<void>((r) => (told = r));
  const lines: string[] = [];
  const lock = await acquireLockFile({ path, onContention: () => (count++, told()), log: (l) => lines.push(l), ...(searchPath !== undefined ? { searchPath } : {}) });
  return { path, lock, heard, lines, count: () => count };
}
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms))]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exitOf = (c: ReturnType<typeof spawn>) => new Promise<number | null>((r) => c.once("exit", (code) => r(code)));

test("lock file: a plain open by `cat` in another process is contention (inotify IN_OPEN); our own opens are not", { skip: noInotify }, async () => {
  const h = await holder();
  try {
    assert.match(h.lines.join("\n"), /watching the lock file \S+ for another process's open \(inotifywait\)/);
    await sleep(300);
    assert.equal(h.count(), 0, "nothing heard before anyone else opens the file");
    assert.equal(await exitOf(spawn("cat", [h.path])), 0);
    await within(h.heard, 5000, "contention after cat opened the file");
    await sleep(200);
    assert.equal(h.count(), 1, "told once");
  } finally {
    await h.lock.release();
  }
});

test("lock file: fs.openSync in a node child process is contention", { skip: noInotify }, async () => {
  const h = await holder();
  try {
    const child = spawn(process.execPath, ["-e", `const fs = require("node:fs"); fs.closeSync(fs.openSync(${JSON.stringify(h.path)}, "r"))`]);
    assert.equal(await exitOf(child), 0);
    await within(h.heard, 5000, "contention after a node child opened the file");
  } finally {
    await h.lock.release();
  }
});

test("lock file: released, the inotifywait helper is gone (no open heard, no process left)", { skip: noInotify }, async () => {
  const h = await holder();
  const helpers = () => execFileSync("pgrep", ["-f", `inotifywait -m -e open,delete_self --format %e ${h.path}`], { encoding: "utf8" }).trim();
  assert.notEqual(helpers(), "", "the helper runs while the lock is held");
  await h.lock.release();
  await sleep(300);
  assert.throws(() => helpers(), "no helper left after release (pgrep finds none)");
  await exitOf(spawn("cat", [h.path]));
  await sleep(300);
  assert.equal(h.count(), 0);
});

test("lock file: without inotifywait on PATH the holder logs why and falls back to a watch that hears a touch, not an open", async () => {
  const empty = mkdtempSync(join(tmpdir(), "nodeagent-lock-path-"));
  const h = await holder(empty);
  try {
    assert.match(h.lines.join("\n"), /inotifywait not found on PATH \(Debian's inotify-tools\); watching the lock file \S+ for changes only/);
    assert.equal(await exitOf(spawn("cat", [h.path])), 0);
    await sleep(500);
    assert.equal(h.count(), 0, "a plain open is not noticed by the fallback");
    const now = new Date();
    utimesSync(h.path, now, now);
    await within(h.heard, 5000, "contention after a touch");
  } finally {
    await h.lock.release();
  }
});
