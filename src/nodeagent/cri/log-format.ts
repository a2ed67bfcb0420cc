// The CRI container log format: one record per line,
// `<RFC3339Nano timestamp> <stdout|stderr> <F|P> <content>`, where P marks a
// partial line (a long line cut, or output that ended without a newline, as
// containerd writes it). Runtimes write it; the agent reads it for
// `kubectl logs`. Both directions live here so they cannot disagree.

import { createWriteStream, type WriteStream } from "node:fs";
import type { Readable } from "node:stream";

export type LogStream = "stdout" | "stderr";

/** Longest content of one record; a longer line is split into P records (upstream uses 16 KiB). */
export const MAX_LOG_LINE = 16 * 1024;

export interface LogRecord {
  /** The timestamp as written (RFC 3339 with nanoseconds). */
  time: string;
  stream: LogStream;
  /** True for a P(artial) record: the line continues in the next record. */
  partial: boolean;
  content: string;
}

// Wall-clock nanoseconds that never go backwards within a process: the epoch
// at start-up plus the monotonic clock since (Date alone has milliseconds only).
const EPOCH_NS = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Nanoseconds since the epoch, monotonic within this process. */
export function nowNanos(): bigint {
  return EPOCH_NS + process.hrtime.bigint();
}

/** RFC 3339 with nine fractional digits and Z, as the CRI log format and containerd write it. */
export function rfc3339Nano(nanos: bigint = nowNanos()): string {
  const ms = nanos / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString(); // 2024-01-02T03:04:05.678Z
  return `${iso.slice(0, 19)}.${String(nanos % 1_000_000_000n).padStart(9, "0")}Z`;
}

/** One record, newline included. */
export function formatLogRecord(stream: LogStream, partial: boolean, content: string, time = rfc3339Nano()): string {
  return `${time} ${stream} ${partial ? "P" : "F"} ${content}\n`;
}

/** Parses one record (without its newline); undefined when the line is not in the CRI format. */
export function parseLogRecord(line: string): LogRecord | undefined {
  const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/s.exec(line.endsWith("\n") ? line.slice(0, -1) : line);
  if (m === null) {
    // A record with empty content may lack the space after the tag.
    const e = /^(\S+) (stdout|stderr) ([FP])$/.exec(line.trimEnd());
    return e === null ? undefined : { time: e[1]!, stream: e[2] as LogStream, partial: e[3] === "P", content: "" };
  }
  return { time: m[1]!, stream: m[2] as LogStream, partial: m[3] === "P", content: m[4]! };
}

/**
 * Writes a container's stdout and stderr into one CRI log file. Each stream is
 * cut into lines; a line longer than MAX_LOG_LINE becomes P records followed
 * by an F record. Output left without a newline when a stream ends is written
 * as a P record. reopen() starts a new file at the same path (log rotation).
 */
export class CriLogWriter {
  readonly #path: string;
  #out: WriteStream;
  readonly #pending = new Map<LogStream, string>();
  #closed: Promise<void> | undefined;

  constructor(path: string) {
    this.#path = path;
    this.#out = createWriteStream(path, { flags: "a" });
    this.#out.on("error", () => {}); // a vanished log directory must not crash the runtime
  }

  get path(): string {
    return this.#path;
  }

  /** Follows `source` until it ends; resolves when its last record is queued. */
  attach(stream: LogStream, source: Readable): Promise<void> {
    source.setEncoding("utf8");
    source.on("data", (chunk: string) => this.write(stream, chunk));
    source.resume(); // a source paused by its producer starts flowing here
    return new Promise((resolve) => {
      const done = (): void => {
        source.off("end", done).off("close", done).off("error", done);
        this.flush(stream);
        resolve();
      };
      source.on("end", done).on("close", done).on("error", done);
    });
  }

  /** Adds output of one stream; complete lines are written at once. */
  write(stream: LogStream, chunk: string): void {
    let text = (this.#pending.get(stream) ?? "") + chunk;
    let nl: number;
    let records = "";
    while ((nl = text.indexOf("\n")) >= 0) {
      records += this.#line(stream, text.slice(0, nl));
      text = text.slice(nl + 1);
    }
    while (text.length > MAX_LOG_LINE) {
      records += formatLogRecord(stream, true, text.slice(0, MAX_LOG_LINE));
      text = text.slice(MAX_LOG_LINE);
    }
    this.#pending.set(stream, text);
    if (records !== "") this.#out.write(records);
  }

  /** Writes what is left of a stream's last line (no newline came) as a partial record. */
  flush(stream: LogStream): void {
    const rest = this.#pending.get(stream) ?? "";
    this.#pending.delete(stream);
    if (rest !== "") this.#out.write(formatLogRecord(stream, true, rest));
  }

  /** Closes the file and opens the path anew (after the agent rotated it). */
  reopen(): void {
    const old = this.#out;
    this.#out = createWriteStream(this.#path, { flags: "a" });
    this.#out.on("error", () => {});
    old.end();
  }

  /** Flushes everything and closes the file. */
  close(): Promise<void> {
    if (this.#closed) return this.#closed;
    for (const stream of [...this.#pending.keys()]) this.flush(stream);
    this.#closed = new Promise((resolve) => this.#out.end(() => resolve()));
    return this.#closed;
  }

  #line(stream: LogStream, line: string): string {
    let out = "";
    while (line.length > MAX_LOG_LINE) {
      out += formatLogRecord(stream, true, line.slice(0, MAX_LOG_LINE));
      line = line.slice(MAX_LOG_LINE);
    }
    return out + formatLogRecord(stream, false, line);
  }
}
