// Termination messages from the container's file, or with
// FallbackToLogsOnError from its log's tail, with upstream's limits.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerStatus } from "../cri/index.js";
import { formatLogRecord } from "../cri/log-format.js";
import { MAX_LOG_MESSAGE_BYTES, MAX_MESSAGE_BYTES, terminationMessage, terminationMessageMount } from "./termination-message.js";

const dir = mkdtempSync(join(tmpdir(), "orch-termination-"));
test.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10 }));

function exited(mountFile: string | undefined, containerPath: string, exitCode: number, logLines: string[]): ContainerStatus {
  const logPath = join(dir, `${Math.random().toString(16).slice(2)}.log`);
  writeFileSync(logPath, logLines.map((l, i) => formatLogRecord(i % 2 === 0 ? "stdout" : "stderr", false, l)).join(""));
  return {
    exitCode, reason: exitCode === 0 ? "Completed" : "Error", logPath,
    mounts: mountFile === undefined ? [] : [{ containerPath, hostPath: mountFile }],
  } as unknown as ContainerStatus;
}

test("each start gets an empty file anyone may write, under the pod's containers/<name>/ folder", () => {
  const a = terminationMessageMount(join(dir, "pod"), "main", "/dev/termination-log");
  const b = terminationMessageMount(join(dir, "pod"), "main", "/dev/termination-log");
  assert.notEqual(a.hostPath, b.hostPath);
  assert.ok(a.hostPath.startsWith(join(dir, "pod", "containers", "main") + "/"));
  assert.equal(statSync(a.hostPath).size, 0);
  assert.equal(statSync(a.hostPath).mode & 0o777, 0o666);
  assert.equal(a.containerPath, "/dev/termination-log");
  assert.equal(a.readonly, false);
});

test("the file's content is the message, cut at 4 KiB, whatever the policy and exit code", async () => {
  const m = terminationMessageMount(join(dir, "pod"), "file", "/custom/path");
  writeFileSync(m.hostPath, "DONE");
  assert.equal(await terminationMessage(exited(m.hostPath, "/custom/path", 0, ["log line"]), "/custom/path", "File"), "DONE");
  assert.equal(await terminationMessage(exited(m.hostPath, "/custom/path", 1, ["log line"]), "/custom/path", "FallbackToLogsOnError"), "DONE");
  writeFileSync(m.hostPath, "x".repeat(MAX_MESSAGE_BYTES + 100));
  assert.equal((await terminationMessage(exited(m.hostPath, "/custom/path", 0, []), "/custom/path", "File")).length, MAX_MESSAGE_BYTES);
});

test("an empty file: FallbackToLogsOnError takes the log's tail when the container failed, not when it succeeded; File never", async () => {
  const m = terminationMessageMount(join(dir, "pod"), "logs", "/dev/termination-log");
  assert.equal(await terminationMessage(exited(m.hostPath, "/dev/termination-log", 1, ["DONE"]), "/dev/termination-log", "FallbackToLogsOnError"), "DONE\n");
  assert.equal(await terminationMessage(exited(m.hostPath, "/dev/termination-log", 0, ["DONE"]), "/dev/termination-log", "FallbackToLogsOnError"), "");
  assert.equal(await terminationMessage(exited(m.hostPath, "/dev/termination-log", 1, ["DONE"]), "/dev/termination-log", "File"), "");
  // The last 80 lines (both streams), then their last 2 KiB.
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);
  const tail = await terminationMessage(exited(m.hostPath, "/dev/termination-log", 2, lines), "/dev/termination-log", "FallbackToLogsOnError");
  assert.equal(tail, lines.slice(20).map((l) => `${l}\n`).join(""));
  const long = Array.from({ length: 10 }, (_, i) => `${i}`.repeat(500));
  const cut = await terminationMessage(exited(m.hostPath, "/dev/termination-log", 2, long), "/dev/termination-log", "FallbackToLogsOnError");
  assert.equal(cut.length, MAX_LOG_MESSAGE_BYTES);
  assert.ok(cut.endsWith(`${"9".repeat(500)}\n`));
});

test("no path, or no mount for it and no fallback: no message", async () => {
  assert.equal(await terminationMessage(exited(undefined, "", 1, ["x"]), "", "FallbackToLogsOnError"), "");
  assert.equal(await terminationMessage(exited(undefined, "/dev/termination-log", 1, ["x"]), "/dev/termination-log", "File"), "");
  assert.equal(await terminationMessage(exited(join(dir, "gone"), "/dev/termination-log", 0, ["x"]), "/dev/termination-log", "File"), "");
});
