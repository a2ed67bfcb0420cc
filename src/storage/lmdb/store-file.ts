// Opens the lmdb file under a data folder without ever overwriting something
// that is not ours: an existing file must carry lmdb's magic number, and any
// open failure names the file.

import { closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
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

export function openStoreFile<T>(dataDir: string, openLmdb: (path: string) => T): OpenedStoreFile<T> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, STORE_FILE);
  const created = !exists(path);
  if (!created) checkLmdbFile(path);
  try {
    return { root: openLmdb(path), path, created };
  } catch (err) {
    throw new StorageError("Corrupt", `cannot open store ${path}: ${(err as Error).message}`, { cause: err });
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
