// Opens the lmdb file under a data folder without ever overwriting something
// that is not ours: an existing file must carry lmdb's magic number, and any
// open failure names the file.

import { chmodSync, closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { StorageError } from "../errors.js";

export const STORE_FILE = "store.mdb";

/**
 * LMDB writes 0xBEEFC0DE (little-endian) right after the page header of its
 * first meta page: 16 bytes in classic LMDB, 24 in the 1.0 format lmdb-js uses.
 */
const LMDB_MAGIC_OFFSETS = [16, 24];
const LMDB_MAGIC = 0xbeefc0de;

export interface OpenedStoreFile<T> {
  root: T;
  path: string;
  /** True when the file did not exist before this call. */
  created: boolean;
}

export function openStoreFile<T>(dataDir: string, openLmdb: (path: string) => T, warn: (line: string) => void = stderrLine): OpenedStoreFile<T> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Only orch reads the store and its folder: 0700 and 0600 whatever existed (issue 18, point 6).
  restrictMode(dataDir, 0o700, warn);
  const path = join(dataDir, STORE_FILE);
  const created = !exists(path);
  if (!created) checkLmdbFile(path);
  let root: T;
  try {
    root = openLmdb(path);
  } catch (err) {
    throw new StorageError("Corrupt", `cannot open store ${path}: ${(err as Error).message}`, { cause: err });
  }
  for (const file of [path, `${path}${LOCK_SUFFIX}`]) if (exists(file)) restrictMode(file, 0o600, warn);
  return { root, path, created };
}

/** lmdb's lock file beside the store (noSubdir mode). */
const LOCK_SUFFIX = "-lock";

function stderrLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** chmod unless the mode is already right; a warning when not allowed (another owner, a read-only mount). */
function restrictMode(path: string, mode: number, warn: (line: string) => void): void {
  try {
    if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
  } catch (err) {
    warn(`warning: cannot make ${path} mode ${mode.toString(8)}: ${(err as Error).message}`);
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

function checkLmdbFile(path: string): void {
  const stat = statSync(path);
  if (!stat.isFile()) throw new StorageError("Corrupt", `store ${path} is not a regular file; refusing to use it`);
  const header = Buffer.alloc(Math.max(...LMDB_MAGIC_OFFSETS) + 4);
  const fd = openSync(path, "r");
  let read: number;
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  const magic = read === header.length && LMDB_MAGIC_OFFSETS.some((at) => header.readUInt32LE(at) === LMDB_MAGIC);
  if (!magic) {
    throw new StorageError(
      "Corrupt",
      `store ${path} is not an lmdb file (damaged or foreign); refusing to open it. Move it away or use another --data-dir.`,
    );
  }
}
