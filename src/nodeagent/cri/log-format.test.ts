// The CRI log format: records written and parsed back, long lines cut into P
// records, an unterminated last line kept partial, rotation by reopen().

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { waitFor } from "./testing/wait.js";
import { CriLogWriter, MAX_LOG_LINE, formatLogRecord, parseLogRecord, rfc3339Nano } from "./log-format.js";

test("timestamps are RFC 3339 with nine fractional digits in UTC", () => {
  assert.equal(rfc3339Nano(BigInt(Date.parse("2024-01-02T03:04:05.678Z")) * 1_000_000n + 123_456n), "2024-01-02T03:04:05.678123456Z");
  assert.match(rfc3339Nano(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
  const stamps = Array.from({ length: 50 }, () => rfc3339Nano());
  assert.deepEqual([...stamps].sort(), stamps, "never backwards");
});

test("format and parse are inverse; empty content and tabs survive", () => {
  for (const [stream, partial, content] of [["stdout", false, "hello world"], ["stderr", true, "a\tb  c"], ["stdout", false, ""]] as const) {
    const line = formatLogRecord(stream, partial, content, "2024-01-02T03:04:05.000000001Z");
    assert.deepEqual(parseLogRecord(line), { time: "2024-01-02T03:04:05.000000001Z", stream, partial, content });
  }
  assert.equal(parseLogRecord("not a log line"), undefined);
  assert.equal(parseLogRecord("2024-01-02T03:04:05Z stdin F x"), undefined);
});

test("the writer cuts lines, splits long ones into P records, keeps streams apart, and rotates", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-crilog-"));
  try {
    const file = join(dir, "c.log");
    const w = new CriLogWriter(file);
    const out = new PassThrough();
    const err = new PassThrough();
    const done = Promise.all([w.attach("stdout", out), w.attach("stderr", err)]);
    out.write("one\ntw");
    err.write("warn\n");
    out.write("o\n" + "x".repeat(MAX_LOG_LINE + 10) + "\n");
    out.end("tail");
    err.end();
    await done;
    await w.close();
    const records = readFileSync(file, "utf8").trimEnd().split("\n").map((l) => parseLogRecord(l)!);
    const stdout = records.filter((r) => r.stream === "stdout").map((r) => [r.partial ? "P" : "F", r.content.length > 20 ? r.content.length : r.content]);
    assert.deepEqual(stdout, [["F", "one"], ["F", "two"], ["P", MAX_LOG_LINE], ["F", "x".repeat(10)], ["P", "tail"]]);
    assert.deepEqual(records.filter((r) => r.stream === "stderr").map((r) => r.content), ["warn"]);

    const rotated = join(dir, "r.log");
    const w2 = new CriLogWriter(rotated);
    w2.write("stdout", "before\n");
    await waitFor("the first write", () => (existsSync(rotated) && readFileSync(rotated, "utf8").includes("before") ? true : undefined));
    renameSync(rotated, `${rotated}.1`);
    w2.reopen();
    w2.write("stdout", "after\n");
    await w2.close();
    assert.match(readFileSync(`${rotated}.1`, "utf8"), /^\S+ stdout F before\n$/);
    assert.match(readFileSync(rotated, "utf8"), /^\S+ stdout F after\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});
