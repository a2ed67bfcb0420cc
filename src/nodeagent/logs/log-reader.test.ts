import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { CriLogWriter, formatLogRecord } from "../cri/log-format.js";
import { goTimestamp, readLog, tailStart, type ReadLogOptions } from "./log-reader.js";

const dir = mkdtempSync(join(tmpdir(), "orch-log-reader-"));
test.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10 }));
let n = 0;

const T = (s: number) => `2026-01-02T03:04:${String(s).padStart(2, "0")}.120000000Z`;
const rec = (s: number, content: string, partial = false, stream: "stdout" | "stderr" = "stdout") => formatLogRecord(stream, partial, content, T(s));

function file(content: string): string {
  const path = join(dir, `${n++}.log`);
  writeFileSync(path, content);
  return path;
}

/** Collects what readLog writes. */
function sink() {
  const s = new PassThrough();
  let text = "";
  s.on("data", (c: Buffer) => (text += c.toString()));
  return { sink: s, text: () => text };
}

async function read(path: string, opts: ReadLogOptions = {}): Promise<string> {
  const s = sink();
  await readLog(path, opts, s.sink);
  return s.text();
}

const LOG = rec(1, "one") + rec(2, "two-a", true) + rec(3, "two-b", true) + rec(4, "two-c") + rec(5, "err", false, "stderr") + rec(6, "four");

test("reads every record's content; P records join the next into one line", async () => {
  assert.equal(await read(file(LOG)), "one\ntwo-atwo-btwo-c\nerr\nfour\n");
});

test("a record still being written (no newline yet) and lines not in the CRI format are left out", async () => {
  assert.equal(await read(file(rec(1, "one") + "garbage line\n" + rec(2, "two") + `${T(3)} stdout F half`)), "one\ntwo\n");
});

test("tailLines counts lines, not records; 0 gives nothing; more than there are gives all", async () => {
  const path = file(LOG);
  assert.equal(await read(path, { tailLines: 1 }), "four\n");
  assert.equal(await read(path, { tailLines: 3 }), "two-atwo-btwo-c\nerr\nfour\n");
  assert.equal(await read(path, { tailLines: 0 }), "");
  assert.equal(await read(path, { tailLines: 100 }), "one\ntwo-atwo-btwo-c\nerr\nfour\n");
});

test("tailLines counts a trailing run of P records as a line", async () => {
  const path = file(rec(1, "one") + rec(2, "two") + rec(3, "rest-a", true) + rec(4, "rest-b", true));
  assert.equal(await read(path, { tailLines: 1 }), "rest-arest-b");
  assert.equal(await read(path, { tailLines: 2 }), "two\nrest-arest-b");
});

test("tailLines finds its start across read chunks in a file of 200 000 lines", async () => {
  let content = "";
  for (let i = 0; i < 200_000; i++) content += rec(i % 60, `line ${i}`);
  const path = file(content);
  assert.equal(await read(path, { tailLines: 3 }), "line 199997\nline 199998\nline 199999\n");
  const fh = await open(path, "r");
  try {
    assert.equal(await tailStart(fh, content.length, 200_000), 0);
  } finally {
    await fh.close();
  }
});

test("since skips records written before it; tailLines applies before it", async () => {
  const path = file(LOG);
  assert.equal(await read(path, { sinceMs: Date.parse(T(5)) }), "err\nfour\n");
  assert.equal(await read(path, { sinceMs: Date.parse(T(5)) + 1 }), "four\n");
  assert.equal(await read(path, { tailLines: 1, sinceMs: Date.parse(T(1)) }), "four\n");
});

test("limitBytes cuts the output at that many bytes, mid-line", async () => {
  assert.equal(await read(file(LOG), { limitBytes: 6 }), "one\ntw");
  assert.equal(await read(file(LOG), { limitBytes: 4 }), "one\n");
});

test("timestamps prefix each line once, with the time of its first record, Go-formatted", async () => {
  assert.equal(
    await read(file(LOG), { timestamps: true, tailLines: 3 }),
    "2026-01-02T03:04:02.12Z two-atwo-btwo-c\n2026-01-02T03:04:05.12Z err\n2026-01-02T03:04:06.12Z four\n",
  );
  assert.equal(goTimestamp("2026-01-02T03:04:05.000000000Z"), "2026-01-02T03:04:05Z");
  assert.equal(goTimestamp("2026-01-02T03:04:05.123456789+02:00"), "2026-01-02T03:04:05.123456789+02:00");
});

/** Reads with follow until `stop` resolves to true for what was read so far. */
function follow(path: string, opts: ReadLogOptions & { running?: () => boolean } = {}) {
  const s = sink();
  const abort = new AbortController();
  const done = readLog(path, { ...opts, follow: true }, s.sink, {
    signal: abort.signal,
    idleCheckMs: 50,
    stillRunning: async () => opts.running?.() ?? true,
  });
  const until = async (want: string) => {
    const deadline = Date.now() + 5000;
    while (!s.text().includes(want)) {
      if (Date.now() > deadline) throw new Error(`never saw ${JSON.stringify(want)}; got ${JSON.stringify(s.text())}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { text: s.text, until, done, stop: () => abort.abort() };
}

test("follow sees lines appended by the runtime's writer, and ends when aborted", async () => {
  const path = join(dir, `${n++}.log`);
  const writer = new CriLogWriter(path);
  writer.write("stdout", "first\n");
  await new Promise((r) => setTimeout(r, 20));
  const f = follow(path, { tailLines: 10 });
  await f.until("first\n");
  writer.write("stdout", "second\nthird-");
  writer.write("stdout", "end\n");
  await f.until("second\nthird-end\n");
  f.stop();
  await f.done;
  await writer.close();
  assert.equal(f.text(), "first\nsecond\nthird-end\n");
});

test("follow reads the rest of a rotated file, then the new file at the same path", async () => {
  const path = join(dir, `${n++}.log`);
  writeFileSync(path, rec(1, "old-1"));
  const f = follow(path);
  await f.until("old-1\n");
  appendFileSync(path, rec(2, "old-2"));
  renameSync(path, `${path}.20260102-030405`);
  writeFileSync(path, rec(3, "new-1"));
  await f.until("new-1\n");
  appendFileSync(path, rec(4, "new-2"));
  await f.until("new-2\n");
  f.stop();
  await f.done;
  assert.equal(f.text(), "old-1\nold-2\nnew-1\nnew-2\n");
});

test("follow ends by itself once the container no longer runs, after reading its last lines", async () => {
  const path = file(rec(1, "a"));
  let running = true;
  const f = follow(path, { running: () => running });
  await f.until("a\n");
  appendFileSync(path, rec(2, "last"));
  running = false;
  await f.done;
  assert.equal(f.text(), "a\nlast\n");
});

test("follow with limitBytes ends once the limit is reached", async () => {
  const path = file(rec(1, "abc"));
  const f = follow(path, { limitBytes: 6 });
  await f.until("abc\n");
  appendFileSync(path, rec(2, "defgh"));
  await f.done;
  assert.equal(f.text(), "abc\nde");
});

test("a missing file is an ENOENT error", async () => {
  await assert.rejects(read(join(dir, "missing.log")), { code: "ENOENT" });
});
