// The proxy's handling of failed syncs: back-off that doubles up to a minute,
// each distinct failure logged once, and a missing iptables binary (a real
// ENOENT from spawning it with an empty PATH) explained with what to install.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Iptables } from "./iptables.js";
import { syncFailureLog } from "./proxier.js";
import { buildRules, chainNames } from "./rules.js";

test("failed syncs back off from the minimum interval to a minute, and a repeated error is logged once", () => {
  const lines: string[] = [];
  const failures = syncFailureLog((l) => lines.push(l), 1_000);
  assert.equal(failures.delayMs(), 1_000);
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    failures.failed(Object.assign(new Error("iptables-restore: Resource temporarily unavailable"), {}));
    delays.push(failures.delayMs());
  }
  assert.deepEqual(delays, [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0]!, /syncing rules failed \(retrying with back-off up to 60s; the same error is not logged again\): iptables-restore: Resource/);
  failures.failed(new Error("another error"));
  assert.equal(lines.length, 2);
  failures.succeeded();
  assert.match(lines[2]!, /rules synced after 9 failed attempts/);
  assert.equal(failures.delayMs(), 1_000);
});

test("without iptables installed: the spawn error keeps its ENOENT code and the log says what to install, once", async () => {
  const path = process.env.PATH;
  process.env.PATH = mkdtempSync(join(tmpdir(), "orch-empty-path-"));
  let err: NodeJS.ErrnoException;
  try {
    err = await new Iptables(chainNames("OTEST")).sync(buildRules([], () => [], chainNames("OTEST"))).then(() => assert.fail("synced without iptables"), (e) => e);
  } finally {
    process.env.PATH = path;
  }
  assert.equal(err.code, "ENOENT");
  const lines: string[] = [];
  const failures = syncFailureLog((l) => lines.push(l), 1_000);
  failures.failed(err);
  failures.failed(err);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /iptables is not installed \(apt-get install iptables\)\. Until it is, Service cluster IPs and NodePorts are not programmed/);
});
