// Resource limits and usage for embedded-runtime containers through the host's
// cgroup file system: v1 (memory, cpu, cpuacct, pids hierarchies, as on these
// VMs) or v2 (unified). Where the hierarchy is absent or not writable the
// container runs without limits and the runtime records why.

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LinuxContainerResources } from "../../cri/types.js";

const ROOT = "/sys/fs/cgroup";
const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "pids"] as const;

export interface CgroupUsage {
  cpuNanos?: number;
  memoryUsage?: number;
  workingSet?: number;
  rss?: number;
  pageFaults?: number;
  majorPageFaults?: number;
  memoryLimit?: number;
  swapUsage?: number;
  oomKills?: number;
}

export type CgroupVersion = "v1" | "v2";

export class Cgroups {
  readonly version: CgroupVersion | undefined;
  /** Why limits are not applied, when they are not. */
  readonly unavailable: string | undefined;

  constructor(root = ROOT) {
    this.#root = root;
    if (process.getuid?.() !== 0) {
      this.unavailable = "not running as root: cgroups are not writable";
    } else if (existsSync(join(root, "cgroup.controllers"))) {
      this.version = "v2";
    } else if (V1_CONTROLLERS.every((c) => existsSync(join(root, c, "cgroup.procs")))) {
      this.version = "v1";
      // A hybrid host: containers join the unified hierarchy too (no controllers there), for their pressure files.
      this.#unified = existsSync(join(root, "unified", "cgroup.procs"));
    } else {
      this.unavailable = `no writable cgroup hierarchy under ${root}`;
    }
  }

  readonly #root: string;
  #unified = false;

  /** The cgroup.procs files a process writes itself into to join the group `path` (relative, e.g. "orch/abc"). */
  procsFiles(path: string): string[] {
    if (this.version === "v2") return [join(this.#root, path, "cgroup.procs")];
    if (this.version === "v1") return this.#v1Dirs(path).map((d) => join(d, "cgroup.procs"));
    return [];
  }

  /** Creates the group and applies the limits; returns notes on limits that could not be set. */
  create(path: string, resources: LinuxContainerResources | null | undefined): string[] {
    if (this.version === undefined) return [];
    for (const dir of this.#dirs(path)) mkdirSync(dir, { recursive: true });
    return this.update(path, resources);
  }

  update(path: string, r: LinuxContainerResources | null | undefined): string[] {
    const notes: string[] = [];
    if (this.version === undefined || r == null) return notes;
    const set = (controller: string, file: string, value: string | number, quiet = false): boolean => {
      const target = this.version === "v2" ? join(this.#root, path, file) : join(this.#root, controller, path, file);
      try {
        writeFileSync(target, String(value));
        return true;
      } catch (err) {
        if (!quiet) notes.push(`${file}=${value}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        return false;
      }
    };
    if (this.version === "v1") {
      const memsw = existsSync(join(this.#root, "memory", path, "memory.memsw.limit_in_bytes"));
      const mem = r.memoryLimitInBytes;
      // memory+swap in v1; the agent sends memory limit + allowed swap (seed 001, "Swap behavior setting").
      const swap = r.memorySwapLimitInBytes;
      if (swap > 0 && !memsw) notes.push("memory.memsw.limit_in_bytes: swap accounting is off on this kernel");
      // The kernel keeps memory <= memory+swap at every step: raise memsw first, lower memory first.
      if (mem > 0 && swap > 0 && memsw) {
        const current = Number(readFileSync(join(this.#root, "memory", path, "memory.limit_in_bytes"), "utf8"));
        if (mem > current) {
          set("memory", "memory.memsw.limit_in_bytes", swap);
          set("memory", "memory.limit_in_bytes", mem);
        } else {
          set("memory", "memory.limit_in_bytes", mem);
          set("memory", "memory.memsw.limit_in_bytes", swap);
        }
      } else if (mem > 0) {
        // Without a swap limit, one set before may cap the new memory limit: lift it to match.
        if (!set("memory", "memory.limit_in_bytes", mem, memsw) && memsw) {
          set("memory", "memory.memsw.limit_in_bytes", mem);
          set("memory", "memory.limit_in_bytes", mem);
        }
      } else if (swap > 0 && memsw) {
        set("memory", "memory.memsw.limit_in_bytes", swap);
      }
      if (r.cpuShares > 0) set("cpu", "cpu.shares", r.cpuShares);
      if (r.cpuPeriod > 0) set("cpu", "cpu.cfs_period_us", r.cpuPeriod);
      if (r.cpuQuota > 0) set("cpu", "cpu.cfs_quota_us", r.cpuQuota);
    } else {
      if (r.memoryLimitInBytes > 0) set("", "memory.max", r.memoryLimitInBytes);
      if (r.memorySwapLimitInBytes > 0 && r.memoryLimitInBytes > 0) set("", "memory.swap.max", Math.max(0, r.memorySwapLimitInBytes - r.memoryLimitInBytes));
      if (r.cpuShares > 0) set("", "cpu.weight", Math.max(1, Math.min(10000, Math.round(1 + ((r.cpuShares - 2) * 9999) / 262142))));
      if (r.cpuQuota > 0) set("", "cpu.max", `${r.cpuQuota} ${r.cpuPeriod > 0 ? r.cpuPeriod : 100000}`);
      for (const [file, value] of Object.entries(r.unified ?? {})) if (/^[a-z]+\.[a-z._]+$/.test(file)) set("", file, value);
    }
    return notes;
  }

  /** PIDs in the group (all controllers agree; the first is read). */
  pids(path: string): number[] {
    const file = this.procsFiles(path)[0];
    if (file === undefined) return [];
    try {
      return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  usage(path: string): CgroupUsage {
    const read = (controller: string, file: string): string | undefined => {
      try {
        return readFileSync(this.version === "v2" ? join(this.#root, path, file) : join(this.#root, controller, path, file), "utf8");
      } catch {
        return undefined;
      }
    };
    const num = (s: string | undefined): number | undefined => (s === undefined || s.trim() === "max" ? undefined : Number(s.trim()));
    const kv = (s: string | undefined): Map<string, number> => new Map((s ?? "").split("\n").filter(Boolean).map((l) => { const [k, v] = l.split(/\s+/); return [k!, Number(v)]; }));
    if (this.version === "v1") {
      const stat = kv(read("memory", "memory.stat"));
      const usage = num(read("memory", "memory.usage_in_bytes"));
      const inactive = stat.get("total_inactive_file") ?? 0;
      const memsw = num(read("memory", "memory.memsw.usage_in_bytes"));
      return {
        cpuNanos: num(read("cpuacct", "cpuacct.usage")),
        memoryUsage: usage,
        workingSet: usage === undefined ? undefined : Math.max(0, usage - inactive),
        rss: stat.get("total_rss"),
        pageFaults: stat.get("total_pgfault"),
        majorPageFaults: stat.get("total_pgmajfault"),
        memoryLimit: num(read("memory", "memory.limit_in_bytes")),
        swapUsage: memsw !== undefined && usage !== undefined ? Math.max(0, memsw - usage) : undefined,
        oomKills: kv(read("memory", "memory.oom_control")).get("oom_kill"),
      };
    }
    if (this.version === "v2") {
      const stat = kv(read("", "memory.stat"));
      const usage = num(read("", "memory.current"));
      const cpu = kv(read("", "cpu.stat")).get("usage_usec");
      return {
        cpuNanos: cpu === undefined ? undefined : cpu * 1000,
        memoryUsage: usage,
        workingSet: usage === undefined ? undefined : Math.max(0, usage - (stat.get("inactive_file") ?? 0)),
        rss: stat.get("anon"),
        pageFaults: stat.get("pgfault"),
        majorPageFaults: stat.get("pgmajfault"),
        memoryLimit: num(read("", "memory.max")),
        swapUsage: num(read("", "memory.swap.current")),
        oomKills: kv(read("", "memory.events")).get("oom_kill"),
      };
    }
    return {};
  }

  /** Kills what is left in the group and removes it. */
  remove(path: string): void {
    for (const pid of this.pids(path)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    for (const dir of this.#dirs(path).reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // busy (processes still exiting) or gone; a later removal retries
      }
    }
  }

  /**
   * Freezes every process of the group (checkpointing): v2 writes cgroup.freeze;
   * v1 moves them into a freezer group of the same path (containers do not
   * join the freezer hierarchy otherwise) and sets it FROZEN. Resolves once the
   * kernel reports the group frozen; rejects when there is no freezer.
   */
  async freeze(path: string, signal?: AbortSignal): Promise<void> {
    if (this.version === undefined) throw new Error(`no cgroup freezer: ${this.unavailable ?? "cgroups unavailable"}`);
    const pids = this.pids(path);
    if (this.version === "v2") {
      writeFileSync(join(this.#root, path, "cgroup.freeze"), "1");
      await this.#until(() => /^frozen 1$/m.test(readFileSync(join(this.#root, path, "cgroup.events"), "utf8")), signal);
      return;
    }
    const dir = join(this.#root, "freezer", path);
    if (!existsSync(join(this.#root, "freezer", "cgroup.procs"))) throw new Error("no cgroup freezer: the v1 freezer hierarchy is not mounted");
    mkdirSync(dir, { recursive: true });
    for (const pid of pids) {
      try {
        writeFileSync(join(dir, "cgroup.procs"), String(pid));
      } catch {
        // exited meanwhile
      }
    }
    writeFileSync(join(dir, "freezer.state"), "FROZEN");
    await this.#until(() => readFileSync(join(dir, "freezer.state"), "utf8").trim() === "FROZEN", signal);
  }

  /** Thaws what freeze() froze; in v1 the processes go back to the freezer root and the group is removed. */
  thaw(path: string): void {
    if (this.version === "v2") {
      writeFileSync(join(this.#root, path, "cgroup.freeze"), "0");
      return;
    }
    if (this.version !== "v1") return;
    const dir = join(this.#root, "freezer", path);
    if (!existsSync(dir)) return;
    writeFileSync(join(dir, "freezer.state"), "THAWED");
    for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
      try {
        writeFileSync(join(this.#root, "freezer", "cgroup.procs"), pid);
      } catch {
        // exited meanwhile
      }
    }
    try {
      rmdirSync(dir);
    } catch {
      // a process still moving out: left for the next thaw
    }
  }

  async #until(done: () => boolean, signal?: AbortSignal): Promise<void> {
    while (!done()) {
      signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  #dirs(path: string): string[] {
    if (this.version === "v2") return [join(this.#root, path)];
    if (this.version === "v1") return this.#v1Dirs(path);
    return [];
  }

  #v1Dirs(path: string): string[] {
    const dirs = V1_CONTROLLERS.map((c) => join(this.#root, c, path));
    return this.#unified ? [...dirs, join(this.#root, "unified", path)] : dirs;
  }
}
