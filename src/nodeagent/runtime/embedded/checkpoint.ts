// The embedded runtime's CheckpointContainer (seed 001, "Checkpoint a
// container"): the container's processes are frozen (cgroup freezer) while a
// tar archive is written at the location the agent names, holding for every
// process its memory (the readable regions of /proc/PID/maps read from
// /proc/PID/mem), its metadata (cmdline, environment, limits, open file
// descriptors, status) and the container's root file system changes (the
// overlay's upper directory), then thawed. The archive is mode 0600 (it holds
// memory: keys, secrets). A timeout (seconds, 0 = the runtime's default)
// bounds the whole operation; past it the container is thawed and nothing is
// left behind. Restoring such an archive needs CRIU: see docs/nodeagent.md.

import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { status as Code } from "@grpc/grpc-js";
import * as tar from "tar";
import type { Cgroups } from "./cgroups.js";
import { RuntimeError } from "./errors.js";
import type { ContainerRecord } from "./records.js";

/** The runtime's default when the request names no timeout (as containerd's CRI default for the call). */
export const DEFAULT_CHECKPOINT_TIMEOUT_S = 120;

export interface CheckpointInput {
  readonly container: ContainerRecord;
  /** The container's cgroup path (layout.containerCgroup). */
  readonly cgroup: string;
  readonly cgroups: Cgroups;
  /** The container's own directory (the overlay's upper directory lives there). */
  readonly containerDir: string;
  /** Absolute path of the archive to write. */
  readonly location: string;
  /** Seconds; 0 is the default. */
  readonly timeout: number;
}

/** One readable memory region of /proc/PID/maps. */
interface Region {
  start: bigint;
  end: bigint;
  perms: string;
  offset: string;
  path: string;
}

export function parseMaps(text: string): Region[] {
  const regions: Region[] = [];
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) \S+ \d+\s*(.*)$/.exec(line);
    if (m === null) continue;
    regions.push({ start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), perms: m[3]!, offset: m[4]!, path: m[5] ?? "" });
  }
  return regions;
}

export async function checkpointContainer(input: CheckpointInput): Promise<void> {
  const { container: c, location } = input;
  if (location === "" || !location.startsWith("/")) throw new RuntimeError(Code.INVALID_ARGUMENT, `checkpoint location must be an absolute path, not ${JSON.stringify(location)}`);
  if (c.state !== "CONTAINER_RUNNING" || c.pid <= 0) throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is not running`);
  const seconds = input.timeout > 0 ? input.timeout : DEFAULT_CHECKPOINT_TIMEOUT_S;
  const signal = AbortSignal.timeout(seconds * 1000);
  let staging = "";
  let frozen = false;
  try {
    mkdirSync(dirname(location), { recursive: true, mode: 0o700 });
    staging = mkdtempSync(join(dirname(location), ".checkpoint-"));
    chmodSync(staging, 0o700);
    try {
      await input.cgroups.freeze(input.cgroup, signal);
      frozen = true;
    } catch (err) {
      if (signal.aborted) throw deadline(seconds);
      throw new RuntimeError(Code.FAILED_PRECONDITION, `cannot freeze container ${c.id}: ${(err as Error).message}`);
    }
    const pids = input.cgroups.pids(input.cgroup);
    if (!pids.includes(c.pid)) pids.unshift(c.pid);
    const dumped: number[] = [];
    for (const pid of pids) {
      signal.throwIfAborted();
      if (dumpProcess(pid, join(staging, "processes", String(pid)), signal)) dumped.push(pid);
    }
    if (dumped.length === 0) throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} has no process left to checkpoint`);
    const upper = join(input.containerDir, "upper");
    const rootfs = existsSync(upper) ? "overlay upper directory" : "none recorded (the container runs on a copy of its image or the host's root)";
    writeFileSync(join(staging, "config.dump"), JSON.stringify({ id: c.id, podSandboxId: c.podSandboxId, image: c.image, imageId: c.imageId, process: c.process, config: c.config, createdAt: c.createdAt, startedAt: c.startedAt }, null, 2));
    writeFileSync(join(staging, "checkpoint.json"), JSON.stringify({ format: "orch-embedded-checkpoint/v1", runtime: "orch-embedded", checkpointedAt: new Date().toISOString(), processes: dumped, rootfsChanges: rootfs, restore: "needs CRIU (not performed by the embedded runtime)" }, null, 2));
    const entries = ["checkpoint.json", "config.dump", "processes"];
    signal.throwIfAborted();
    const part = `${location}.part`;
    await tar.create({ file: part, cwd: staging, portable: true, mode: 0o600 } as tar.TarOptionsWithAliasesFile, entries);
    if (existsSync(upper)) await tar.update({ file: part, cwd: input.containerDir, portable: true } as tar.TarOptionsWithAliasesFile, ["upper"]);
    signal.throwIfAborted();
    chmodSync(part, 0o600);
    // The archive appears under its name only complete (a rename keeps the mode).
    renameSync(part, location);
  } catch (err) {
    try {
      rmSync(`${location}.part`, { force: true });
    } catch {
      // its directory is not one
    }
    if (signal.aborted && !(err instanceof RuntimeError)) throw deadline(seconds);
    if (err instanceof RuntimeError) throw err;
    throw new RuntimeError(Code.UNKNOWN, `checkpointing container ${c.id} failed: ${(err as Error).message}`);
  } finally {
    if (frozen) {
      try {
        input.cgroups.thaw(input.cgroup);
      } catch {
        // the group is gone with its processes
      }
    }
    if (staging !== "") rmSync(staging, { recursive: true, force: true });
  }
}

const deadline = (seconds: number) => new RuntimeError(Code.DEADLINE_EXCEEDED, `checkpointing did not finish within ${seconds}s: context deadline exceeded`);

/** Writes one process's memory and metadata under `dir`; false when it exited meanwhile. */
function dumpProcess(pid: number, dir: string, signal: AbortSignal): boolean {
  const proc = `/proc/${pid}`;
  let maps: string;
  try {
    maps = readFileSync(join(proc, "maps"), "utf8");
  } catch {
    return false;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const copy = (name: string) => {
    try {
      writeFileSync(join(dir, name), readFileSync(join(proc, name)));
    } catch {
      // a file the kernel hides from us: left out
    }
  };
  for (const name of ["cmdline", "environ", "limits", "status", "stat", "maps"]) copy(name);
  const fds: Record<string, string> = {};
  try {
    for (const fd of readdirSync(join(proc, "fd"))) {
      try {
        fds[fd] = readlinkSync(join(proc, "fd", fd));
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // no fd directory
  }
  let cwd = "";
  let exe = "";
  try {
    cwd = readlinkSync(join(proc, "cwd"));
    exe = readlinkSync(join(proc, "exe"));
  } catch {
    // kernel thread or gone
  }
  writeFileSync(join(dir, "files.json"), JSON.stringify({ cwd, exe, fds }, null, 2));

  // Memory: every readable region, concatenated in pages.img; pages.json says where each starts.
  const index: { start: string; end: string; perms: string; offset: string; path: string; at: number; bytes: number; error?: string }[] = [];
  let mem: number;
  try {
    mem = openSync(join(proc, "mem"), "r");
  } catch (err) {
    writeFileSync(join(dir, "pages.json"), JSON.stringify({ error: (err as Error).message }));
    return true;
  }
  const out = openSync(join(dir, "pages.img"), "w", 0o600);
  let at = 0;
  const chunk = Buffer.allocUnsafe(1 << 20);
  try {
    for (const r of parseMaps(maps)) {
      if (r.perms[0] !== "r" || r.path === "[vvar]" || r.path === "[vsyscall]") continue;
      signal.throwIfAborted();
      const entry = { start: r.start.toString(16), end: r.end.toString(16), perms: r.perms, offset: r.offset, path: r.path, at, bytes: 0 } as (typeof index)[number];
      try {
        for (let pos = r.start; pos < r.end; ) {
          const want = Number(r.end - pos < BigInt(chunk.length) ? r.end - pos : BigInt(chunk.length));
          const n = readSync(mem, chunk, 0, want, pos);
          if (n <= 0) break;
          writeSync(out, chunk, 0, n);
          entry.bytes += n;
          at += n;
          pos += BigInt(n);
        }
      } catch (err) {
        entry.error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      }
      index.push(entry);
    }
  } finally {
    closeSync(out);
    closeSync(mem);
  }
  writeFileSync(join(dir, "pages.json"), JSON.stringify(index, null, 1));
  return true;
}
