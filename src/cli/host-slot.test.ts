// Host slots of `orch server`s on one host: a new server takes the lowest
// slot no running server holds, its data folder keeps it, a dead server's
// slot is free again, an old data folder is slot 0, and ten running servers
// leave none. The registry is a temporary folder; "another running server"
// is this test's parent process (alive), a finished child is a dead one.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimHostSlot, slotDefaults, SLOT_FILE } from "./host-slot.js";

const temp = (name: string) => mkdtempSync(join(tmpdir(), `orch-slot-${name}-`));
const hold = (registry: string, slot: number, pid: number, dataDir = "/srv/other") => writeFileSync(join(registry, `slot-${slot}.json`), JSON.stringify({ pid, dataDir }));

test("slot 0 is the default range and prefix; slot k moves both", () => {
  assert.deepEqual(slotDefaults(0), { serviceRange: "10.96.0.0/12", chainPrefix: "ORCH" });
  assert.deepEqual(slotDefaults(1), { serviceRange: "10.112.0.0/12", chainPrefix: "ORCH1" });
  assert.deepEqual(slotDefaults(9), { serviceRange: "10.240.0.0/12", chainPrefix: "ORCH9" });
});

test("a second server takes the next free slot, keeps it across restarts, and gives it back at stop", () => {
  const registry = temp("registry");
  hold(registry, 0, process.ppid);
  const dir = temp("data");
  const s = claimHostSlot(dir, { fresh: true, registry });
  assert.equal(s.slot, 1);
  assert.equal(s.serviceRange, "10.112.0.0/12");
  assert.equal(s.chainPrefix, "ORCH1");
  assert.match(s.note, /host slot 1 \(other orch servers on this host hold slot 0 \(pid \d+, \/srv\/other\)\)/);
  assert.equal(readFileSync(join(dir, SLOT_FILE), "utf8"), "1\n");
  assert.ok(existsSync(join(registry, "slot-1.json")));
  s.release();
  assert.ok(!existsSync(join(registry, "slot-1.json")));
  // Restarted after slot 0 went away: it keeps slot 1 (its services' addresses are in that range).
  hold(registry, 0, deadPid());
  const again = claimHostSlot(dir, { fresh: false, registry });
  assert.equal(again.slot, 1);
  assert.match(again.note, /kept in/);
  again.release();
});

test("a dead server's slot is free again; an old data folder is slot 0 and a collision is said", () => {
  const registry = temp("registry");
  hold(registry, 0, deadPid());
  const fresh = claimHostSlot(temp("data"), { fresh: true, registry });
  assert.equal(fresh.slot, 0);
  fresh.release();
  hold(registry, 0, process.ppid);
  const old = claimHostSlot(temp("data"), { fresh: false, registry });
  assert.equal(old.slot, 0);
  assert.match(old.note, /a data folder from before host slots.*WARNING: the server of \/srv\/other \(pid \d+\) runs with the same slot/);
  old.release();
  assert.ok(existsSync(join(registry, "slot-0.json")), "the other server's slot file stays");
});

test("ten running servers hold every slot: an eleventh is told which flags to give", () => {
  const registry = temp("registry");
  for (let s = 0; s < 10; s++) hold(registry, s, process.ppid, `/srv/other-${s}`);
  assert.throws(() => claimHostSlot(temp("data"), { fresh: true, registry }), /every host slot \(0-9\) is held by a running orch server .*--service-cluster-ip-range and --iptables-chain-prefix/);
});

function deadPid(): number {
  return spawnSync(process.execPath, ["-e", ""]).pid!;
}
