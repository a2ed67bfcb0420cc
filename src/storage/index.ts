// The storage layer's front door: open the configured backend. etcd is
// loaded only when asked for, so an lmdb-only process never loads gRPC.

import { compressedValues } from "./compressed-values.js";
import { LmdbStorage } from "./lmdb/index.js";
import { TransformedStorage } from "./transformed-storage.js";
import type { Storage } from "./storage.js";

export * from "./storage.js";
export * from "./errors.js";
export { startCompactor, type Compactor } from "./compactor.js";
export { unreadableReason, unreadableValue } from "./unreadable-value.js";

export interface StorageConfig {
  backend: "lmdb" | "etcd";
  /** lmdb: the folder holding store.mdb. */
  dataDir: string;
  /** etcd: client URLs. */
  etcdServers?: string[];
  /** etcd: prefix for every key (lets several clusters share one etcd). */
  etcdPrefix?: string;
  /** etcd: TLS material (PEM) for https:// servers (--etcd-cafile, --etcd-certfile, --etcd-keyfile). */
  etcdTls?: { ca?: string; cert?: string; key?: string };
  /** etcd: store values compressed (compressed-values.ts; default true). Compressed values are read either way. */
  etcdCompression?: boolean;
  log?: (line: string) => void;
}

/** A store plus a cheap health probe for /readyz. */
export interface OpenedStorage {
  store: Storage;
  healthy(): boolean;
  /** Why writes are refused now (lmdb: the disk is full), or undefined: /readyz's `storage-space` check. */
  writeProblem(): string | undefined;
}

export async function openStorage(config: StorageConfig): Promise<OpenedStorage> {
  if (config.backend === "lmdb") {
    const store = await LmdbStorage.open({ dataDir: config.dataDir, ...(config.log === undefined ? {} : { log: config.log }) });
    return { store, healthy: () => true, writeProblem: () => store.writeProblem() };
  }
  const { openEtcdStorage } = await import("./etcd/index.js");
  const log = config.log;
  const store = await openEtcdStorage({
    endpoints: config.etcdServers ?? [],
    prefix: config.etcdPrefix ?? "",
    ...(config.etcdTls === undefined ? {} : { tls: config.etcdTls }),
    ...(log === undefined ? {} : { logger: { info: log, warn: log } }),
  });
  const compression = compressedValues();
  // Reading compressed values is not optional: another API server on the same etcd may write them.
  const compressing = config.etcdCompression === false ? { seal: (plain: Uint8Array) => plain, open: compression.open } : compression;
  return { store: new TransformedStorage(store, () => compressing), healthy: () => store.healthy(), writeProblem: () => undefined };
}
