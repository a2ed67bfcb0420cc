// For tests of the storage door on both backends: two clients of one store,
// `ours` under the door under test and `theirs` writing around it (another
// API server on etcd; a write not made through the door on lmdb).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcdSkipReason, startEtcd } from "../etcd/testing/etcd-server.js";
import { openEtcdStorage } from "../etcd/index.js";
import { LmdbStorage } from "../lmdb/index.js";
import type { Storage } from "../storage.js";

export interface TwoClients {
  ours: Storage;
  theirs: Storage;
  close(): Promise<void>;
}

/** A real etcd (skipped with the reason when it is not installed) and the embedded lmdb store. */
export const TWO_CLIENT_BACKENDS: { name: string; skip: string | false; open: () => Promise<TwoClients> }[] = [
  {
    name: "etcd",
    skip: etcdSkipReason() ?? false,
    async open() {
      const etcd = await startEtcd();
      const ours = await openEtcdStorage({ endpoints: etcd.endpoints });
      const theirs = await openEtcdStorage({ endpoints: etcd.endpoints });
      return { ours, theirs, close: async () => (await ours.close(), await theirs.close(), await etcd.stop()) };
    },
  },
  {
    name: "lmdb",
    skip: false,
    async open() {
      const dataDir = mkdtempSync(join(tmpdir(), "orch-two-clients-"));
      const store = await LmdbStorage.open({ dataDir });
      return { ours: store, theirs: store, close: async () => (await store.close(), rmSync(dataDir, { recursive: true, force: true })) };
    },
  },
];
