// Runs the shared storage conformance suite against the lmdb backend.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runStorageConformance } from "../testing/storage.case.js";
import { LmdbStorage } from "./lmdb-storage.js";

const root = mkdtempSync(join(tmpdir(), "orch-lmdb-conformance-"));
let n = 0;
runStorageConformance("lmdb", () => LmdbStorage.open({ dataDir: join(root, String(n++)), compactionBatch: 2 }), {
  teardown: async () => rmSync(root, { recursive: true, force: true }),
});
