// startOrch's contract when a server is not ready in time: the process is
// killed, not left behind holding its ports, data folder and iptables chains
// (the conformance runner's aborted start once left one fighting the next
// run's proxy over the same chains).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOrch } from "./orch-process.js";

const running = (marker: string) => {
  try {
    return execFileSync("pgrep", ["-f", marker], { encoding: "utf8" }).trim() !== "";
  } catch {
    return false; // pgrep exits 1 when nothing matches
  }
};

test("a server not ready within readyTimeoutMs is killed, not left running", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "orch-not-ready-"));
  try {
    await assert.rejects(startOrch("apiserver", [], { readyTimeoutMs: 200, dataDir }), /not ready after 200 ms \(killed\)/);
    for (let i = 0; i < 50 && running(dataDir); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(running(dataDir), false, "no process with its data folder is left");
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
