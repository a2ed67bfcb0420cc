// The audit log file (`--audit-log-path`, "-" for standard output): one JSON
// line per event, appended synchronously so lines keep their order and a
// crash loses none that were answered. Rotation as upstream's lumberjack:
// before a write that would take the file past `maxSizeBytes` (the flag is in
// MB; 0 means lumberjack's 100 MB) the file is renamed to
// NAME-<UTC 2006-01-02T15-04-05.000>.EXT and a new one started; backups
// beyond `maxBackups` (0: keep all) or older than `maxAgeDays` (0: no limit,
// read from the timestamp in the name) are deleted.

import { closeSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";

export interface AuditLogOptions {
  /** A file, or "-" for standard output. */
  readonly path: string;
  readonly maxSizeBytes?: number;
  readonly maxAgeDays?: number;
  readonly maxBackups?: number;
}

export interface AuditSink {
  write(line: string): void;
  close(): void;
}

const DEFAULT_MAX_BYTES = 100 * 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

export function openAuditLog(options: AuditLogOptions): AuditSink {
  if (options.path === "-") return { write: (line) => void process.stdout.write(line), close: () => {} };
  return new RotatingFile(options);
}

/** lumberjack's backup name: audit.log → audit-2026-11-27T22-13-24.123.log (UTC). */
export function backupName(path: string, at: Date): string {
  const ext = extname(path);
  const stem = basename(path, ext);
  const stamp = at.toISOString().replace(/:/g, "-").replace(/Z$/, "");
  return join(dirname(path), `${stem}-${stamp}${ext}`);
}

class RotatingFile implements AuditSink {
  readonly #path: string;
  readonly #max: number;
  readonly #maxAgeMs: number;
  readonly #maxBackups: number;
  #fd: number;
  #size: number;
  #closed = false;

  constructor(o: AuditLogOptions) {
    this.#path = o.path;
    this.#max = o.maxSizeBytes !== undefined && o.maxSizeBytes > 0 ? o.maxSizeBytes : DEFAULT_MAX_BYTES;
    this.#maxAgeMs = (o.maxAgeDays ?? 0) * DAY_MS;
    this.#maxBackups = o.maxBackups ?? 0;
    mkdirSync(dirname(o.path), { recursive: true, mode: 0o700 });
    this.#fd = openSync(o.path, "a", 0o600);
    this.#size = statSync(o.path).size;
  }

  write(line: string): void {
    // A connection that outlives the server (exec) ends after the log closed: its last event is dropped.
    if (this.#closed) return;
    const bytes = Buffer.from(line);
    // An event bigger than the limit still goes in (alone in its file): an audit record is not dropped.
    if (this.#size > 0 && this.#size + bytes.length > this.#max) this.#rotate();
    writeSync(this.#fd, bytes);
    this.#size += bytes.length;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
  }

  #rotate(): void {
    closeSync(this.#fd);
    renameSync(this.#path, backupName(this.#path, new Date()));
    this.#fd = openSync(this.#path, "a", 0o600);
    this.#size = 0;
    this.#prune();
  }

  /** Deletes the backups past the count or age limits, oldest first. */
  #prune(): void {
    if (this.#maxBackups === 0 && this.#maxAgeMs === 0) return;
    const ext = extname(this.#path);
    const prefix = `${basename(this.#path, ext)}-`;
    const dir = dirname(this.#path);
    const backups: { file: string; at: number }[] = [];
    for (const f of readdirSync(dir)) {
      if (!f.startsWith(prefix) || !f.endsWith(ext)) continue;
      const stamp = f.slice(prefix.length, f.length - ext.length);
      const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
      if (m === null) continue;
      backups.push({ file: join(dir, f), at: Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) });
    }
    backups.sort((a, b) => b.at - a.at);
    const now = Date.now();
    backups.forEach((b, i) => {
      const tooMany = this.#maxBackups > 0 && i >= this.#maxBackups;
      const tooOld = this.#maxAgeMs > 0 && now - b.at > this.#maxAgeMs;
      if (tooMany || tooOld) {
        try {
          unlinkSync(b.file);
        } catch {
          // Already gone.
        }
      }
    });
  }
}
