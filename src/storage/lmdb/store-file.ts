// Opens the lmdb file under a data folder without ever overwriting something
// that is not ours: an existing file must carry lmdb's magic number, and any
// open failure names the file.

import { chmodSync, closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
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

/** Opens an existing store file (a snapshot) after the same header and size checks; never creates one. */
export function checkStoreFile<T>(path: string, openLmdb: (path: string) => T): T {
  if (!exists(path)) throw new StorageError("NotFound", `no store file ${path}`);
  checkLmdbFile(path);
  try {
    return openLmdb(path);
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
  const header = readAt(path, 0, META_OFFSET + META_BYTES);
  const magic = header.length === META_OFFSET + META_BYTES && LMDB_MAGIC_OFFSETS.some((at) => header.readUInt32LE(at) === LMDB_MAGIC);
  if (!magic) {
    throw new StorageError(
      "Corrupt",
      `store ${path} is not an lmdb file (damaged or foreign); refusing to open it. Move it away or use another --data-dir.`,
    );
  }
  if (header.readUInt32LE(META_OFFSET) === LMDB_MAGIC) checkSize(path, stat.size, header);
}

/**
 * The 1.0 format's meta pages (pages 0 and 1): after the 24-byte page header,
 * magic, version, address, map size, two 48-byte tree records (the first's
 * leading word is the page size), the last used page and the transaction id.
 */
const META_OFFSET = 24;
const META_BYTES = 136;
const PSIZE_AT = 24;
const LAST_PAGE_AT = 120;
const TXNID_AT = 128;

/**
 * A file shorter than its newest meta page says (truncated by a full disk, a
 * bad copy) would crash the process with a bus error on the first read of a
 * missing page: refuse it with what is wrong and how to restore.
 */
function checkSize(path: string, size: number, first: Buffer): void {
  const psize = first.readUInt32LE(META_OFFSET + PSIZE_AT);
  const damaged = (why: string) =>
    new StorageError(
      "Corrupt",
      `store ${path} is damaged: ${why}; refusing to open it (reading it would crash the process). ` +
        `Move it away and restore a snapshot: orch snapshot restore SNAPSHOT --data-dir ${dirname(path)} (docs/reliability.md, "Damaged store").`,
    );
  if (psize < 512 || psize > 65536 || (psize & (psize - 1)) !== 0) throw damaged(`its page size ${psize} is not a power of two between 512 and 65536`);
  const metas = [first.subarray(META_OFFSET), readAt(path, psize + META_OFFSET, META_BYTES)].filter(
    (m) => m.length === META_BYTES && m.readUInt32LE(0) === LMDB_MAGIC,
  );
  const newest = metas.reduce((a, b) => (b.readBigUInt64LE(TXNID_AT) > a.readBigUInt64LE(TXNID_AT) ? b : a));
  const needed = (Number(newest.readBigUInt64LE(LAST_PAGE_AT)) + 1) * psize;
  if (size < needed) throw damaged(`it is ${size} bytes, but its last committed page ends at byte ${needed} (truncated)`);
}

function readAt(path: string, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const fd = openSync(path, "r");
  try {
    return buf.subarray(0, readSync(fd, buf, 0, length, position));
  } finally {
    closeSync(fd);
  }
}
