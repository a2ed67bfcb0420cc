// The full-disk state of the embedded store (issue 18, point 1; docs/reliability.md, "Disk full").
// A commit that fails while the store's file system is (nearly) full puts the
// store in the "no space" state: writes are refused at once with a NoSpace
// error (507 at the API), reads and watches go on from the map, and every
// refused write and every readiness probe looks at the free space again, so
// writes resume by themselves once the operator frees some.
//
// lmdb-js leaves two promises of a failed commit unobserved (its event-turn
// batch's commit promise and the shared `commitError`); both reject with what
// the writers of that batch already got. Without an owner, Node would end the
// process on them (the crash issue 18 reported), so they are dropped here and
// nothing else is.

import { statfsSync } from "node:fs";
import { NoSpaceError } from "../errors.js";

/** Free bytes below which a failed commit counts as a full disk, and above which writes resume. */
export const MIN_FREE_BYTES = 4 * 1024 * 1024;

/** Error codes that say the file system is out of room whatever statfs says (quotas, reserved blocks). */
const NO_SPACE_CODES = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

export class DiskSpace {
  readonly #dir: string;
  readonly #log: (line: string) => void;
  readonly #freeBytes: (dir: string) => number;
  /** Why writes are refused, or undefined while they are accepted. */
  #problem: string | undefined;

  constructor(dir: string, options: { log?: (line: string) => void; freeBytes?: (dir: string) => number } = {}) {
    this.#dir = dir;
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.#freeBytes = options.freeBytes ?? freeBytes;
  }

  /** At open: a disk already short of space starts the store read-only (until space is freed). */
  checkAtOpen(): void {
    const free = this.#freeBytes(this.#dir);
    if (free < MIN_FREE_BYTES) this.#enter(free);
  }

  /** Why writes are refused now (re-checked against the free space), or undefined. */
  problem(): string | undefined {
    if (this.#problem === undefined) return undefined;
    const free = this.#freeBytes(this.#dir);
    if (free >= MIN_FREE_BYTES) {
      this.#log(`store: ${formatBytes(free)} free again under ${this.#dir}; writes resume`);
      this.#problem = undefined;
    }
    return this.#problem;
  }

  /** Throws the NoSpace error while the disk is full (before a write starts). */
  assertWritable(): void {
    const problem = this.problem();
    if (problem !== undefined) throw new NoSpaceError(problem);
  }

  /**
   * A commit failed: when the disk is the reason, enter the no-space state and
   * return the NoSpace error to answer with; undefined when space is not the cause.
   */
  commitFailed(err: unknown): NoSpaceError | undefined {
    quietCommitError(err);
    const code = (err as { code?: unknown }).code;
    const free = this.#freeBytes(this.#dir);
    if (!(typeof code === "string" && NO_SPACE_CODES.has(code)) && free >= MIN_FREE_BYTES) return undefined;
    return new NoSpaceError(this.#enter(free), err);
  }

  #enter(free: number): string {
    const problem = `no space left for the store under ${this.#dir} (${formatBytes(free)} free, writes need ${formatBytes(MIN_FREE_BYTES)}): writes are refused until space is freed; reads and watches go on`;
    if (this.#problem === undefined) this.#log(`store: ${problem}`);
    this.#problem = problem;
    return problem;
  }
}

function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : `${Math.round(n / 1024)} KiB`;
}

/** Marks lmdb-js's shared commit error as observed (the writers got it through their own promises). */
function quietCommitError(err: unknown): void {
  let e: unknown = err;
  while (e instanceof Error) {
    const shared = (e as { commitError?: unknown }).commitError;
    if (shared instanceof Promise) shared.catch(() => {});
    e = e.cause;
  }
}

let ownerInstalled = false;

/**
 * Owns the rejections lmdb-js leaves unobserved when a commit fails (see the
 * header). Any other unhandled rejection still ends the process as Node's
 * default does, unless the process installed handlers of its own.
 */
export function ownLmdbCommitRejections(): void {
  if (ownerInstalled) return;
  ownerInstalled = true;
  process.on("unhandledRejection", (reason) => {
    if (reason instanceof Error && "commitError" in reason) {
      quietCommitError(reason);
      return;
    }
    // The shared commit error itself, when it is seen first: an lmdb status error raised by its write thread.
    if (reason instanceof Error && typeof (reason as { code?: unknown }).code === "number" && /[\\/]lmdb[\\/]write\.js/.test(reason.stack ?? "")) return;
    if (process.listenerCount("unhandledRejection") > 1) return;
    throw reason;
  });
}
