// Log rotation on files alone (rotateLog) and through a CRI-shaped runtime
// (ContainerLogRotation.rotateAll): names, compression, how many are kept,
// leftovers cleaned, a failed reopen undone, running containers only.

import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { ContainerLogRotation, rotateLog, rotationStamp } from "./log-rotation.js";

const root = mkdtempSync(join(tmpdir(), "orch-logrot-"));
after(() => rmSync(root, { recursive: true, force: true }));
const at = (s: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, s));

test("rotationStamp is upstream's 20060102-150405 in UTC", () => {
  assert.equal(rotationStamp(at(5)), "20260102-030405");
});

test("rotateLog renames with the stamp, compresses the older ones, keeps maxFiles - 2 rotated besides the newest", async () => {
  const dir = join(root, "a");
  const log = join(dir, "0.log");
  mkdirSync(dir);
  let reopened = 0;
  for (let i = 0; i < 5; i++) {
    writeFileSync(log, `content ${i}\n`);
    await rotateLog(log, { maxSizeBytes: 1, maxFiles: 3 }, async () => {
      reopened++;
      writeFileSync(log, "");
    }, at(i));
  }
  assert.equal(reopened, 5);
  // Current + newest rotated + maxFiles - 2 = 1 older (compressed).
  assert.deepEqual(readdirSync(dir).sort(), ["0.log", "0.log.20260102-030403.gz", "0.log.20260102-030404"]);
  assert.equal(gunzipSync(readFileSync(join(dir, "0.log.20260102-030403.gz"))).toString(), "content 3\n");
  assert.equal(readFileSync(join(dir, "0.log.20260102-030404"), "utf8"), "content 4\n");
});

test("leftovers (.tmp, an uncompressed twin of a .gz) are removed; a failed reopen puts the file back", async () => {
  const dir = join(root, "b");
  const log = join(dir, "0.log");
  mkdirSync(dir);
  writeFileSync(join(dir, "0.log.20260101-000000"), "x");
  writeFileSync(join(dir, "0.log.20260101-000000.gz"), "y");
  writeFileSync(join(dir, "0.log.20260101-000001.gz.tmp"), "z");
  writeFileSync(log, "live\n");
  await assert.rejects(rotateLog(log, { maxSizeBytes: 1, maxFiles: 5 }, async () => {
    throw new Error("reopen refused");
  }, at(9)), /reopen refused/);
  assert.deepEqual(readdirSync(dir).sort(), ["0.log", "0.log.20260101-000000.gz"]);
  assert.equal(readFileSync(log, "utf8"), "live\n");
});

test("rotateAll rotates running containers whose log reached the size, and only those", async () => {
  const dir = join(root, "c");
  mkdirSync(dir);
  const big = join(dir, "big.log");
  const small = join(dir, "small.log");
  writeFileSync(big, "x".repeat(2048));
  writeFileSync(small, "x".repeat(10));
  const reopened: string[] = [];
  const runtime = {
    listContainers: async (req: { filter?: { state?: { state?: string } | null } | null }) => {
      assert.equal(req.filter?.state?.state, "CONTAINER_RUNNING");
      return { containers: [{ id: "big" }, { id: "small" }] };
    },
    containerStatus: async (req: { containerId: string }) => ({ status: { logPath: join(dir, `${req.containerId}.log`) } }),
    reopenContainerLog: async (req: { containerId: string }) => {
      reopened.push(req.containerId);
      appendFileSync(join(dir, `${req.containerId}.log`), "");
      return {};
    },
  };
  const r = new ContainerLogRotation({ runtime: runtime as never, maxSizeBytes: 1024, maxFiles: 5, intervalMs: 60_000, log: () => {}, now: () => at(1) });
  await r.rotateAll();
  assert.deepEqual(reopened, ["big"]);
  assert.ok(existsSync(join(dir, "big.log.20260102-030401")));
  assert.equal(readFileSync(big, "utf8"), "");
  assert.equal(readFileSync(small, "utf8").length, 10);
});

test("rotateAll asks a container's log path once, and again only for a container that stopped running and came back", async () => {
  const dir = join(root, "paths");
  mkdirSync(dir);
  let listed = ["a", "b"];
  const asked: string[] = [];
  const runtime = {
    listContainers: async () => ({ containers: listed.map((id) => ({ id })) }),
    containerStatus: async (req: { containerId: string }) => (asked.push(req.containerId), { status: { logPath: join(dir, `${req.containerId}.log`) } }),
    reopenContainerLog: async (req: { containerId: string }) => (appendFileSync(join(dir, `${req.containerId}.log`), ""), {}),
  };
  for (const id of ["a", "b"]) writeFileSync(join(dir, `${id}.log`), "x");
  const r = new ContainerLogRotation({ runtime: runtime as never, maxSizeBytes: 1024, maxFiles: 5, intervalMs: 60_000, log: () => {}, now: () => at(1) });
  await r.rotateAll();
  await r.rotateAll();
  assert.deepEqual(asked.sort(), ["a", "b"], "two passes, one ContainerStatus per container");
  listed = ["b"];
  await r.rotateAll();
  listed = ["a", "b"];
  await r.rotateAll();
  assert.deepEqual(asked.sort(), ["a", "a", "b"], "a was forgotten while not running");
});
