// The embedded runtime's records of sandboxes and containers, kept as one JSON
// file each under <root>/state so they outlive a restart of the runtime.
// Writes go through a temporary file and a rename: a crash leaves the old or
// the new record, never half of one. They run off the event loop (a rename
// over a file waits for its data on ext4: milliseconds under I/O load), in
// order per record; settled() is when all are on disk, and the server answers
// no CRI call before that, so what a call reports is what a restart finds.

import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { nowNanos } from "../../cri/log-format.js";
import type { ContainerConfig, ContainerState, LinuxContainerResources, PodSandboxConfig, PodSandboxState } from "../../cri/types.js";

/** Record times (createdAt, startedAt, finishedAt): nanoseconds since the epoch, as a double (exact to a few hundred ns, plenty for CRI timestamps). */
export const nowNs = (): number => Number(nowNanos());

export interface SandboxRecord {
  id: string;
  config: PodSandboxConfig;
  state: PodSandboxState;
  createdAt: number;
  runtimeHandler: string;
  ip: string;
  hostname: string;
  /** The pod's network namespace (/run/netns/…), "" on the host network. */
  netns: string;
}

export interface ContainerRecord {
  id: string;
  podSandboxId: string;
  config: ContainerConfig;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  /** The name the agent asked for, and what it resolved to (empty when the image is not in the store). */
  image: string;
  imageId: string;
  /** Absolute path of the CRI log file. */
  logPath: string;
  resources: LinuxContainerResources | null;
  /** What runs: resolved at creation from the config and the image. */
  process: { argv: string[]; env: string[]; cwd: string; uid?: number; gid?: number };
  /** Host PID of the container's first process while it runs, and its start time (/proc/<pid>/stat field 22) to tell it from a reused PID. */
  pid: number;
  pidStart: string;
  /** The container's shim (shim.ts) and its start time, while it runs; absent in records of runtimes before the shim. */
  shimPid?: number;
  shimStart?: string;
  /** What the runtime could not honour for this container (no image, no seccomp, limits not set). */
  notes: string[];
  /** A seccomp filter was compiled for it (containers/<id>/seccomp.bpf). */
  seccomp?: boolean;
}

export class RecordStore<T extends { id: string }> {
  readonly #dir: string;
  readonly #items = new Map<string, T>();
  /** The last queued write of each record with writes under way. */
  readonly #writes = new Map<string, Promise<void>>();
  #failure: Error | undefined;

  constructor(dir: string) {
    this.#dir = dir;
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      if (!name.endsWith(".json")) continue;
      try {
        const item = JSON.parse(readFileSync(join(dir, name), "utf8")) as T;
        this.#items.set(item.id, item);
      } catch {
        // a torn temporary or foreign file: ignore it
      }
    }
  }

  get(id: string): T | undefined {
    return this.#items.get(id);
  }

  values(): T[] {
    return [...this.#items.values()];
  }

  save(item: T): void {
    this.#items.set(item.id, item);
    const file = join(this.#dir, `${item.id}.json`);
    const text = JSON.stringify(item);
    this.#write(item.id, async () => {
      await writeFile(`${file}.tmp`, text);
      await rename(`${file}.tmp`, file);
    });
  }

  delete(id: string): void {
    this.#items.delete(id);
    this.#write(id, () => rm(join(this.#dir, `${id}.json`), { force: true }));
  }

  /** Resolves when every record saved or deleted so far (not later) is on disk; rejects with a write's failure. */
  async settled(): Promise<void> {
    await Promise.all(this.#writes.values());
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure !== undefined) throw failure;
  }

  /** Queues `write` after the record's earlier writes. */
  #write(id: string, write: () => Promise<void>): void {
    const done = (this.#writes.get(id) ?? Promise.resolve())
      .then(write)
      .catch((err: Error) => void (this.#failure = err))
      .finally(() => {
        if (this.#writes.get(id) === done) this.#writes.delete(id);
      });
    this.#writes.set(id, done);
  }
}
