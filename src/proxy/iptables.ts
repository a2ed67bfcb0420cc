// Applying the proxy's rules: one `iptables-restore --noflush` per sync
// replaces our chains (and only ours) atomically per table, deletes our
// per-service chains the sync no longer writes, and makes sure the built-in
// chains jump to ours. cleanup() takes everything of ours out again.

import { execFile, type ExecFileException } from "node:child_process";
import type { ChainNames, ServiceRules } from "./rules.js";

/** Built-in chains and the jump each gets to ours (table, chain, rule). */
function jumps(names: ChainNames): [table: string, chain: string, rule: string[]][] {
  const portals = ["-m", "comment", "--comment", "orch service portals", "-j", names.services];
  const reject = ["-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "orch service ports without endpoints", "-j", names.reject];
  return [
    ["nat", "PREROUTING", portals],
    ["nat", "OUTPUT", portals],
    ["nat", "POSTROUTING", ["-m", "comment", "--comment", "orch service masquerade", "-j", names.postrouting]],
    ["filter", "INPUT", reject],
    ["filter", "FORWARD", reject],
    ["filter", "OUTPUT", reject],
  ];
}

function run(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (err: ExecFileException | null, stdout, stderr) => {
      // The code stays on the error: ENOENT (the binary is not installed) is reported differently.
      if (err) reject(Object.assign(new Error(`${cmd} ${args.join(" ")}: ${stderr.trim() || err.message}`), typeof err.code === "string" ? { code: err.code } : {}));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

export class Iptables {
  readonly #names: ChainNames;
  /** Our per-service chains as of the last sync (undefined: not read from the host yet). */
  #written: Set<string> | undefined;

  constructor(names: ChainNames) {
    this.#names = names;
  }

  /** Writes the rules; returns how many stale chains were deleted. */
  async sync(rules: ServiceRules): Promise<number> {
    this.#written ??= await this.#ourServiceChains();
    const current = new Set(rules.chains);
    const stale = [...this.#written].filter((c) => !current.has(c));
    // Stale chains are declared (which empties them) and deleted after the new rules stop jumping to them.
    const restore = stale.length === 0 ? rules.restore : rules.restore.replace("*nat\n", `*nat\n${stale.map((c) => `:${c} - [0:0]`).join("\n")}\n`).replace("COMMIT\n*filter", `${stale.map((c) => `-X ${c}`).join("\n")}\nCOMMIT\n*filter`);
    await run("iptables-restore", ["--noflush", "--wait"], restore);
    this.#written = current;
    await this.#ensureJumps();
    return stale.length;
  }

  /** Removes our jumps and chains (`orch proxy --cleanup`, and tests). */
  async cleanup(): Promise<void> {
    for (const [table, chain, rule] of jumps(this.#names)) {
      while (await run("iptables", ["-w", "-t", table, "-C", chain, ...rule]).then(() => true, () => false)) {
        await run("iptables", ["-w", "-t", table, "-D", chain, ...rule]);
      }
    }
    const ours = await this.#ourChains();
    for (const [table, chains] of Object.entries(ours)) {
      if (chains.length === 0) continue;
      await run("iptables-restore", ["--noflush", "--wait"], `*${table}\n${chains.map((c) => `:${c} - [0:0]`).join("\n")}\n${chains.map((c) => `-X ${c}`).join("\n")}\nCOMMIT\n`);
    }
    this.#written = undefined;
  }

  async #ensureJumps(): Promise<void> {
    for (const [table, chain, rule] of jumps(this.#names)) {
      const present = await run("iptables", ["-w", "-t", table, "-C", chain, ...rule]).then(() => true, () => false);
      if (!present) await run("iptables", ["-w", "-t", table, "-I", chain, "1", ...rule]);
    }
  }

  /** Every chain of ours in the nat and filter tables. */
  async #ourChains(): Promise<Record<"nat" | "filter", string[]>> {
    const prefix = this.#names.services.slice(0, this.#names.services.length - "SERVICES".length);
    const read = async (table: string) =>
      (await run("iptables-save", ["-t", table])).split("\n").filter((l) => l.startsWith(`:${prefix}`)).map((l) => l.slice(1, l.indexOf(" ")));
    return { nat: await read("nat"), filter: await read("filter") };
  }

  async #ourServiceChains(): Promise<Set<string>> {
    const { nat } = await this.#ourChains();
    return new Set(nat.filter((c) => c.startsWith(this.#names.svc) || c.startsWith(this.#names.sep) || c.startsWith(this.#names.ext)));
  }
}
