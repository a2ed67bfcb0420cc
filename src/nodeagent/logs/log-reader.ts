// Reads one CRI log file (../cri/log-format.ts) for `kubectl logs`: the
// records' content in order, P(artial) records joined with the next, with
// upstream's tailLines (last N lines), since (records older are skipped),
// limitBytes (output cut there), timestamps (each line prefixed with its
// record's time) and follow (waits for more; reopens the path when the file is
// rotated or recreated; ends once the container no longer runs). Seed 001 (the
// agent's port); upstream's kuberuntime ReadLogs is the behaviour followed.

import { watch, type FSWatcher } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { untilOr, writeOrWait, type ChunkSink } from "../../machinery/until.js";
import { parseLogRecord } from "../cri/log-format.js";

export interface ReadLogOptions {
  /** Only the last N lines (0: none, then follow if asked). */
  readonly tailLines?: number;
  /** Milliseconds since the epoch: records written earlier are skipped. */
  readonly sinceMs?: number;
  /** Stop after writing this many bytes. */
  readonly limitBytes?: number;
  /** Prefix each line with its record's time (RFC 3339, trailing zeros trimmed as Go prints it). */
  readonly timestamps?: boolean;
  /** Keep reading as the file grows, until the container stops or `signal` fires. */
  readonly follow?: boolean;
}

/** Where the output goes: an HTTP response, a stream, a test's collector. */
export type LogSink = ChunkSink;

export interface ReadLogContext {
  /** Ends the read (the client went away). */
  readonly signal?: AbortSignal;
  /** Asked while following and nothing was written for a while: false ends the read. */
  readonly stillRunning?: () => Promise<boolean>;
  /** How long a follow waits for a change before asking stillRunning (default 1 s). */
  readonly idleCheckMs?: number;
  /** Called once a follow knows where it starts: what is written from then on is read (attach sends input only after it). */
  readonly onFollowing?: () => void;
}

const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/** Go's RFC3339Nano: the fraction loses its trailing zeros (and the dot when nothing is left). */
export function goTimestamp(time: string): string {
  return time.replace(/\.(\d*?)0*(Z|[+-]\d{2}:\d{2})$/, (_m, digits: string, zone: string) => (digits === "" ? zone : `.${digits}${zone}`));
}

/** Whether a raw record (without its newline) is a P record; malformed ones count as complete. */
function isPartial(record: Buffer): boolean {
  // `<time> <stream> <tag> ...`: the tag follows the second space.
  const a = record.indexOf(0x20);
  const b = a < 0 ? -1 : record.indexOf(0x20, a + 1);
  return b >= 0 && record[b + 1] === 0x50 /* P */ && (record.length === b + 2 || record[b + 2] === 0x20);
}

/**
 * The offset where the last `n` lines start, looking only at the complete
 * records before `end` (which follows a newline). A line is a run of P records
 * and the F record ending it; a trailing run of P records counts as a line.
 */
export async function tailStart(file: FileHandle, end: number, n: number): Promise<number> {
  if (n <= 0) return end;
  let buf = Buffer.alloc(0);
  let bufStart = end;
  let limit = end;
  let lines = 0;
  while (limit > 0) {
    // The record ending at limit - 1 starts after the newline before it.
    let from = limit - 2 - bufStart;
    let i = from >= 0 ? buf.lastIndexOf(NEWLINE, from) : -1;
    while (i < 0 && bufStart > 0) {
      const len = Math.min(CHUNK, bufStart);
      const chunk = Buffer.alloc(len);
      await file.read(chunk, 0, len, bufStart - len);
      buf = Buffer.concat([chunk, buf.subarray(0, limit - bufStart)]);
      bufStart -= len;
      from = limit - 2 - bufStart;
      i = from >= 0 ? buf.lastIndexOf(NEWLINE, from) : -1;
    }
    const recordStart = i < 0 ? bufStart : bufStart + i + 1;
    // An F record ends a line, and so does the last record (a line still being written).
    const endsLine = !isPartial(buf.subarray(recordStart - bufStart, limit - 1 - bufStart)) || limit === end;
    if (endsLine) {
      if (lines === n) return limit;
      lines++;
    }
    limit = recordStart;
  }
  return 0;
}

/** Offset just after the last newline before `size`: a record being written is not read yet. */
async function completeEnd(file: FileHandle, size: number): Promise<number> {
  let pos = size;
  while (pos > 0) {
    const len = Math.min(CHUNK, pos);
    const chunk = Buffer.alloc(len);
    await file.read(chunk, 0, len, pos - len);
    const i = chunk.lastIndexOf(NEWLINE);
    if (i >= 0) return pos - len + i + 1;
    pos -= len;
  }
  return 0;
}

/** Formats records as upstream's log writer does; counts bytes against limitBytes. */
class Formatter {
  readonly #opts: ReadLogOptions;
  /** Streams in the middle of a line (after a P record): no timestamp before their next record. */
  readonly #midLine = new Set<string>();
  #left: number;

  constructor(opts: ReadLogOptions) {
    this.#opts = opts;
    this.#left = opts.limitBytes ?? Infinity;
  }

  get done(): boolean {
    return this.#left <= 0;
  }

  /** The output for complete raw records (newline-separated, the last without one), as one buffer. */
  format(records: string): Buffer {
    let out = "";
    let start = 0;
    while (start <= records.length && this.#left > 0) {
      let nl = records.indexOf("\n", start);
      if (nl < 0) nl = records.length;
      const one = this.#record(records.slice(start, nl));
      start = nl + 1;
      if (one === undefined) continue;
      if (this.#left !== Infinity) {
        const bytes = Buffer.byteLength(one);
        if (bytes > this.#left) {
          // Cut at the byte, not the character, as upstream's limit does.
          const cut = Buffer.concat([Buffer.from(out), Buffer.from(one).subarray(0, this.#left)]);
          this.#left = 0;
          return cut;
        }
        this.#left -= bytes;
      }
      out += one;
    }
    return Buffer.from(out);
  }

  #record(raw: string): string | undefined {
    const r = parseLogRecord(raw);
    if (r === undefined) return undefined; // upstream logs and skips lines it cannot parse
    if (this.#opts.sinceMs !== undefined && Date.parse(r.time) < this.#opts.sinceMs) return undefined;
    const prefix = this.#opts.timestamps && !this.#midLine.has(r.stream) ? `${goTimestamp(r.time)} ` : "";
    if (r.partial) this.#midLine.add(r.stream);
    else this.#midLine.delete(r.stream);
    return prefix + r.content + (r.partial ? "" : "\n");
  }
}

/**
 * Writes the log at `path` to `sink` as `opts` ask; resolves when done (or
 * the signal fired). A missing file is an error (ENOENT), as upstream's.
 */
export async function readLog(path: string, opts: ReadLogOptions, sink: LogSink, ctx: ReadLogContext = {}): Promise<void> {
  const signal = ctx.signal;
  let file = await open(path, "r");
  let watcher: FSWatcher | undefined;
  let wake: (() => void) | undefined;
  try {
    const formatter = new Formatter(opts);
    const size = (await file.stat()).size;
    const end = await completeEnd(file, size);
    let pos = opts.tailLines !== undefined ? await tailStart(file, end, opts.tailLines) : 0;
    let pending = Buffer.alloc(0);
    const chunk = Buffer.alloc(CHUNK);

    /** Reads what the file holds now from `pos`; false when the output limit was reached. */
    const drain = async (upTo = Infinity): Promise<boolean> => {
      while (pos < upTo && !signal?.aborted) {
        const { bytesRead } = await file.read(chunk, 0, Math.min(CHUNK, upTo - pos), pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        const data = pending.length > 0 ? Buffer.concat([pending, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
        // Complete records are decoded at once; the rest waits for its newline.
        const last = data.lastIndexOf(NEWLINE);
        pending = Buffer.from(data.subarray(last + 1));
        if (last < 0) continue;
        const out = formatter.format(data.toString("utf8", 0, last));
        if (out.length > 0) await writeOrWait(sink, out, signal);
        if (formatter.done) return false;
      }
      return true;
    };

    if (!opts.follow) {
      await drain(end);
      return;
    }
    // Follow: a change in the log's folder (written, rotated, recreated) wakes the loop; so does a timer.
    // `dirty` remembers a change that came while the loop was busy reading, so none is missed.
    const name = basename(path);
    let dirty = false;
    watcher = watch(dirname(path), (_event, changed) => {
      if (changed !== null && changed !== name && !String(changed).startsWith(name)) return;
      dirty = true;
      wake?.();
    });
    watcher.on("error", () => {});
    ctx.onFollowing?.();
    const idleMs = ctx.idleCheckMs ?? 1000;
    while (!signal?.aborted) {
      dirty = false;
      if (!(await drain())) return;
      // Rotated (a new file at the path) or truncated: finish the old file, then read the new one from its start.
      const current = await stat(path).catch(() => undefined);
      const mine = await file.stat();
      if (current !== undefined && (current.ino !== mine.ino || current.size < pos)) {
        if (!(await drain())) return;
        const next = await open(path, "r");
        await file.close();
        file = next;
        pos = 0;
        pending = Buffer.alloc(0);
        continue;
      }
      if (dirty) continue;
      await untilOr(signal, (done) => {
        const timer = setTimeout(done, idleMs);
        wake = () => {
          clearTimeout(timer);
          done();
        };
      });
      wake = undefined;
      if (!dirty && ctx.stillRunning !== undefined && !(await ctx.stillRunning())) {
        // Stopped: whatever it wrote last is read, then the stream ends (upstream's follow does the same).
        await drain();
        return;
      }
    }
  } finally {
    watcher?.close();
    await file.close();
  }
}
