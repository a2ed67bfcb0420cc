// Container log rotation (the agent config's containerLogMaxSize,
// containerLogMaxFiles and containerLogMonitorInterval), as upstream's kubelet
// rotates: every interval, each running container's CRI log file that has
// reached the size is renamed to `<path>.<YYYYMMDD-HHMMSS>` and the runtime
// asked to reopen the path (ReopenContainerLog); rotated files older than the
// newest are gzip-compressed (`.gz`, written as `.gz.tmp` first), and only
// maxFiles - 2 rotated files are kept besides the newest and the current one,
// oldest removed first. Leftovers of an interrupted step (`.tmp` files, an
// uncompressed file whose `.gz` exists) are removed. `kubectl logs` reads the
// current file; a follow moves to the new file once the old one is read to its
// end (log-reader.ts).

import { createReadStream, createWriteStream } from "node:fs";
import { readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import type { CriClient } from "../cri/index.js";

export interface LogRotationPolicy {
  /** Bytes; a negative size turns rotation off (upstream's). */
  readonly maxSizeBytes: number;
  /** Files per container instance, the current one included (at least 2). */
  readonly maxFiles: number;
}

export interface ContainerLogRotationOptions extends LogRotationPolicy {
  readonly runtime: Pick<CriClient, "listContainers" | "containerStatus" | "reopenContainerLog">;
  readonly intervalMs: number;
  readonly log: (line: string) => void;
  readonly now?: () => Date;
}

const COMPRESSED = ".gz";
const TMP = ".tmp";

/** Upstream's suffix format, 20060102-150405 in Go's notation, in UTC. */
export function rotationStamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

export class ContainerLogRotation {
  readonly #o: ContainerLogRotationOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /**
   * Container id → its CRI log path, which is fixed when the container is
   * created: asked once per container, not on every pass (a ContainerStatus
   * per running container every 10 s was, with 100 pods starting, more
   * HTTP/2 streams than the pods' own starts). Ids no longer running are dropped.
   */
  readonly #logPaths = new Map<string, string>();

  constructor(options: ContainerLogRotationOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#o.maxSizeBytes < 0 || this.#timer !== undefined) return;
    const tick = () => {
      this.#running = this.rotateAll().catch((err: Error) => this.#o.log(`log rotation: ${err.message}`)).finally(() => {
        this.#running = undefined;
        if (this.#timer !== undefined) this.#timer = setTimeout(tick, this.#o.intervalMs);
      });
    };
    this.#timer = setTimeout(tick, this.#o.intervalMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One pass over the running containers; a failure on one is logged, the others go on. */
  async rotateAll(): Promise<void> {
    const { containers } = await this.#o.runtime.listContainers({ filter: { id: "", podSandboxId: "", state: { state: "CONTAINER_RUNNING" }, labelSelector: {} } });
    const running = new Set(containers.map((c) => c.id));
    for (const id of this.#logPaths.keys()) if (!running.has(id)) this.#logPaths.delete(id);
    for (const c of containers) {
      try {
        let path = this.#logPaths.get(c.id);
        if (path === undefined) {
          path = (await this.#o.runtime.containerStatus({ containerId: c.id })).status?.logPath ?? "";
          this.#logPaths.set(c.id, path);
        }
        if (path === "") continue;
        let size = await stat(path).then((s) => s.size, () => undefined);
        if (size === undefined) {
          // Lost by a reopen that failed after the rename: the runtime makes it again.
          await this.#o.runtime.reopenContainerLog({ containerId: c.id });
          size = (await stat(path)).size;
        }
        if (size >= this.#o.maxSizeBytes) await rotateLog(path, this.#o, () => this.#o.runtime.reopenContainerLog({ containerId: c.id }).then(() => {}), (this.#o.now ?? (() => new Date()))());
      } catch (err) {
        this.#o.log(`log rotation of container ${c.id}: ${(err as Error).message}`);
      }
    }
  }
}

/** The rotated files of `path` (`<path>.<suffix>`), oldest first (the stamps sort as text). */
export async function rotatedLogs(path: string): Promise<string[]> {
  const prefix = `${basename(path)}.`;
  const names = await readdir(dirname(path));
  return names.filter((n) => n.startsWith(prefix)).sort().map((n) => join(dirname(path), n));
}

/** Rotates one log file now: clean-up, excess removed, older ones compressed, the current one renamed and reopened. */
export async function rotateLog(path: string, policy: LogRotationPolicy, reopen: () => Promise<void>, now: Date): Promise<void> {
  let logs = await rotatedLogs(path);
  // Leftovers of an interrupted step.
  const unused = logs.filter((l) => l.endsWith(TMP) || (!l.endsWith(COMPRESSED) && logs.includes(l + COMPRESSED)));
  for (const l of unused) await rm(l, { force: true });
  logs = logs.filter((l) => !unused.includes(l));
  // Besides the file made now and the one renamed now, maxFiles - 2 rotated files stay: the oldest go first.
  const keep = Math.max(0, policy.maxFiles - 2);
  const excess = logs.slice(0, Math.max(0, logs.length - keep));
  for (const l of excess) await rm(l, { force: true });
  logs = logs.slice(excess.length);
  for (const l of logs) if (!l.endsWith(COMPRESSED)) await compress(l);
  const rotated = `${path}.${rotationStamp(now)}`;
  // Two rotations in one second: the second waits for the next pass.
  if (await stat(rotated).then(() => true, () => false)) return;
  await rename(path, rotated);
  try {
    await reopen();
  } catch (err) {
    // The container still writes the renamed file: it goes back to its name.
    await rename(rotated, path).catch(() => {});
    throw err;
  }
}

async function compress(file: string): Promise<void> {
  const tmp = file + COMPRESSED + TMP;
  await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp));
  await rename(tmp, file + COMPRESSED);
  await rm(file, { force: true });
}
