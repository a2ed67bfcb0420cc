// Several `orch server`s on one host: each one that programs this host's
// service addresses holds a host slot, 0 to 9, and the slot gives what must
// not be shared: the service address range (slot 0 the default 10.96.0.0/12,
// slot k 10.(96+16k).0.0/12), so two clusters never hand out the same
// cluster IP, and the proxy's iptables chain prefix (ORCH, ORCHk) with its
// userspace device. The pod bridge and address book are shared on purpose
// (one per host), the DNS server and the parts' ports take free ports.
//
// A data folder keeps its slot (DATA_DIR/host-slot), so a restarted server
// keeps its service addresses; a new one takes the lowest slot no running
// server holds (running servers are listed in /run/orch/servers, one file
// per slot naming the process and its data folder; ORCH_HOST_SLOTS_DIR names
// another folder, for tests). A data folder made
// before slots existed is slot 0: its services came from the default range.

import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HOST_SLOTS = 10;
export const SLOT_FILE = "host-slot";
const DEFAULT_REGISTRY = "/run/orch/servers";

export interface HostSlot {
  slot: number;
  /** What the slot gives, for flags not named on the command line. */
  serviceRange: string;
  chainPrefix: string;
  /** How the slot was chosen, and any collision with a running server, for the log. */
  note: string;
  /** Gives the slot back (at stop). */
  release(): void;
}

/** The service range and chain prefix of a slot. */
export function slotDefaults(slot: number): { serviceRange: string; chainPrefix: string } {
  return slot === 0 ? { serviceRange: "10.96.0.0/12", chainPrefix: "ORCH" } : { serviceRange: `10.${96 + 16 * slot}.0.0/12`, chainPrefix: `ORCH${slot}` };
}

interface Holder {
  pid: number;
  dataDir: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readHolder(file: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(file, "utf8")) as Holder;
    return typeof h.pid === "number" && typeof h.dataDir === "string" ? h : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Claims this data folder's slot. `fresh`: the folder holds no cluster yet
 * (its first start). Throws when a new server finds every slot held.
 */
export function claimHostSlot(dataDir: string, options: { fresh: boolean; registry?: string }): HostSlot {
  const registry = options.registry ?? process.env["ORCH_HOST_SLOTS_DIR"] ?? DEFAULT_REGISTRY;
  mkdirSync(registry, { recursive: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const me = realpathSync(dataDir);
  const fileOf = (slot: number) => join(registry, `slot-${slot}.json`);
  /** The running server (not us) holding a slot, if any; a dead holder's file is removed. */
  const heldBy = (slot: number): Holder | undefined => {
    const h = readHolder(fileOf(slot));
    if (h === undefined) return undefined;
    if (h.pid === process.pid || h.dataDir === me) return undefined;
    if (alive(h.pid)) return h;
    try { unlinkSync(fileOf(slot)); } catch { /* gone already */ }
    return undefined;
  };
  /** Writes the slot's file unless a running server (not us) holds it; exclusive, so two servers starting at once never both win. */
  const claim = (slot: number): boolean => {
    const mine = JSON.stringify({ pid: process.pid, dataDir: me } satisfies Holder);
    try {
      writeFileSync(fileOf(slot), mine, { flag: "wx" });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || heldBy(slot) !== undefined) return false;
      writeFileSync(fileOf(slot), mine);
      return true;
    }
  };
  const kept = Number.parseInt(existsSync(join(me, SLOT_FILE)) ? readFileSync(join(me, SLOT_FILE), "utf8") : "", 10);
  let slot: number;
  let note: string;
  if ((Number.isInteger(kept) && kept >= 0 && kept < HOST_SLOTS) || !options.fresh) {
    slot = Number.isInteger(kept) && kept >= 0 && kept < HOST_SLOTS ? kept : 0;
    note = kept === slot ? `host slot ${slot} (kept in ${join(me, SLOT_FILE)})` : "host slot 0 (a data folder from before host slots: the default range)";
    if (!claim(slot)) {
      const other = heldBy(slot);
      note += `; WARNING: the server of ${other?.dataDir} (pid ${other?.pid}) runs with the same slot: the two clusters' service addresses collide (stop one, or start this one with --service-cluster-ip-range and --iptables-chain-prefix of its own)`;
    }
  } else {
    const held: string[] = [];
    let found: number | undefined;
    for (let s = 0; s < HOST_SLOTS && found === undefined; s++) {
      if (claim(s)) found = s;
      else held.push(`${s} (pid ${heldBy(s)?.pid}, ${heldBy(s)?.dataDir})`);
    }
    if (found === undefined) {
      throw new Error(`every host slot (0-${HOST_SLOTS - 1}) is held by a running orch server (${registry}): give --service-cluster-ip-range and --iptables-chain-prefix, or --disable-proxy`);
    }
    slot = found;
    note = slot === 0 ? "host slot 0" : `host slot ${slot} (other orch servers on this host hold slot ${held.join(", ")})`;
  }
  if (kept !== slot) writeFileSync(join(me, SLOT_FILE), `${slot}\n`);
  return {
    slot,
    ...slotDefaults(slot),
    note,
    release() {
      if (readHolder(fileOf(slot))?.pid === process.pid) {
        try { unlinkSync(fileOf(slot)); } catch { /* gone already */ }
      }
    },
  };
}
