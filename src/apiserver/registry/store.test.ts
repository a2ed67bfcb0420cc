// The registry store over a real lmdb store. Here: the ListFromCacheSnapshot
// gate (seed 000, "Resource version semantics", Exact lists). Results are the
// same either way; what the gate changes is who answers, so the storage is
// wrapped to count the reads that reach it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { namingFor } from "../../api/naming.js";
import type { ApiObject } from "../../machinery/index.js";
import { Cacher } from "../../storage/cacher/cacher.js";
import { LmdbStorage } from "../../storage/lmdb/index.js";
import type { Storage } from "../../storage/index.js";
import { ApiRegistry } from "../api-registry.js";
import { sampleApi } from "../testing/sample-api.js";
import { SchemaDefaulter } from "./defaults.js";
import { RegistryStore } from "./store.js";

/** The real storage, with a count of the revisioned lists (Exact reads) it serves. */
function countingExactLists(storage: Storage): { storage: Storage; count(): number } {
  let exact = 0;
  const wrapped = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === "list") {
        return (prefix: string, options?: { revision?: number }) => {
          if (options?.revision !== undefined) exact++;
          return target.list(prefix, options);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage: wrapped, count: () => exact };
}

async function widgetStore(snapshots: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "orch-registry-store-"));
  const lmdb = await LmdbStorage.open({ dataDir: dir });
  const counted = countingExactLists(lmdb);
  const naming = namingFor();
  const registry = new ApiRegistry([sampleApi], naming);
  const def = registry.find("samples.orch.io", "widgets")!;
  let store: RegistryStore;
  const cacher = new Cacher<ApiObject>({
    store: counted.storage,
    prefix: "/registry/samples.orch.io/widgets/",
    decode: (kv) => store.decode(kv),
    withRevision: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
  });
  store = new RegistryStore(def, { storage: counted.storage, cacher, naming, defaulter: new SchemaDefaulter(registry.schemas), snapshots, sharding: false });
  await cacher.start();
  return {
    store,
    exactReads: counted.count,
    async close() {
      cacher.stop();
      await lmdb.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const snapshots of [true, false]) {
  test(`ListFromCacheSnapshot ${snapshots ? "on: Exact lists in the window come from the cache" : "off: Exact lists read the store"}`, async () => {
    const t = await widgetStore(snapshots);
    try {
      const widget = (name: string): ApiObject => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name } });
      const a = await t.store.create("ns", widget("a"));
      await t.store.create("ns", widget("b"));
      const before = t.exactReads();
      const list = await t.store.list("ns", { resourceVersion: a.object.metadata.resourceVersion, resourceVersionMatch: "Exact" });
      assert.deepEqual(list.items.map((c) => c.object.metadata.name), ["a"], "the list is the state at that version");
      assert.equal(list.metadata.resourceVersion, a.object.metadata.resourceVersion);
      assert.equal(t.exactReads() - before, snapshots ? 0 : 1);
    } finally {
      await t.close();
    }
  });
}
