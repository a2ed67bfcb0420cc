// Typed storage errors. The API server maps each `code` to a Status
// (AlreadyExists → 409, Conflict → 409, Compacted → 410, TooLarge → 413, ...).

import type { KeyValue } from "./storage.js";

export type StorageErrorCode =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Compacted"
  | "FutureRevision"
  | "TooLarge"
  | "Unavailable"
  | "NoSpace"
  | "Corrupt";

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly key: string | undefined;
  constructor(code: StorageErrorCode, message: string, options?: { key?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = `${code}Error`;
    this.code = code;
    this.key = options?.key;
  }
}

export class NotFoundError extends StorageError {
  constructor(key: string) {
    super("NotFound", `key not found: ${key}`, { key });
  }
}

export class AlreadyExistsError extends StorageError {
  constructor(key: string) {
    super("AlreadyExists", `key already exists: ${key}`, { key });
  }
}

export class ConflictError extends StorageError {
  /** The key's current value, when the backend returned it with the failed compare. */
  readonly current: KeyValue | undefined;
  constructor(key: string, expected: number, current: KeyValue | undefined) {
    super(
      "Conflict",
      `modRevision of ${key} is ${current?.modRevision ?? "absent"}, expected ${expected}`,
      { key },
    );
    this.current = current;
  }
}

export class CompactedError extends StorageError {
  readonly compactedRevision: number;
  readonly requestedRevision: number;
  constructor(requestedRevision: number, compactedRevision: number) {
    super("Compacted", `revision ${requestedRevision} has been compacted (compacted revision ${compactedRevision})`);
    this.compactedRevision = compactedRevision;
    this.requestedRevision = requestedRevision;
  }
}

/** A read at a revision newer than the store's current one. */
export class FutureRevisionError extends StorageError {
  readonly currentRevision: number;
  readonly requestedRevision: number;
  constructor(requestedRevision: number, currentRevision: number) {
    super("FutureRevision", `revision ${requestedRevision} is newer than the current revision ${currentRevision}`);
    this.currentRevision = currentRevision;
    this.requestedRevision = requestedRevision;
  }
}

export class TooLargeError extends StorageError {
  readonly size: number;
  readonly limit: number;
  constructor(key: string, size: number, limit: number) {
    super("TooLarge", `value for ${key} is ${size} bytes, over the limit of ${limit} bytes`, { key });
    this.size = size;
    this.limit = limit;
  }
}

export class StorageUnavailableError extends StorageError {
  constructor(message: string, cause?: unknown) {
    super("Unavailable", message, { cause });
  }
}

/** The disk under the store is full: writes are refused until space comes back (reads and watches go on). */
export class NoSpaceError extends StorageError {
  constructor(message: string, cause?: unknown) {
    super("NoSpace", message, { cause });
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}
