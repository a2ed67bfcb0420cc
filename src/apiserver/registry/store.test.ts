// The registry store over a real lmdb store. Here: the ListFromCacheSnapshot
// gate (seed 000, "Resource version semantics", Exact lists), whose results are
// the same either way, so the storage is wrapped to count the reads that reach
// it; and generateName's retry on a real clash with a stored name.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { namingFor } from "../../api/naming.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import { CachedStorage } from "../../storage/cacher/index.js";
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

async function widgetStore(snapshots: boolean, options: { generateName?: (prefix: string) => string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "orch-registry-store-"));
  const lmdb = await LmdbStorage.open({ dataDir: dir });
  const counted = countingExactLists(lmdb);
  const naming = namingFor();
  const registry = new ApiRegistry([sampleApi], naming);
  const def = registry.find("samples.orch.io", "widgets")!;
  let store: RegistryStore;
  const cacher = new CachedStorage<ApiObject>({
    backend: counted.storage,
    prefix: "/registry/samples.orch.io/widgets/",
    decode: (kv) => store.decode(kv),
    withRevision: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
    snapshots,
  });
  store = new RegistryStore(def, { storage: cacher, naming, defaulter: new SchemaDefaulter(registry.schemas), sharding: false, ...options });
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

const widget = (metadata: ApiObject["metadata"]): ApiObject => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata });

test("generateName: a generated name that clashes with a stored one is drawn again", async () => {
  // The generator is seeded with names already taken, so the clashes are real ones in lmdb.
  const drawn: string[] = [];
  const sequence = ["gen-taken1", "gen-taken2", "gen-fresh"];
  const t = await widgetStore(true, { generateName: (prefix) => (drawn.push(prefix), sequence[drawn.length - 1]!) });
  try {
    await t.store.create("ns", widget({ name: "gen-taken1" }));
    await t.store.create("ns", widget({ name: "gen-taken2" }));
    const created = await t.store.create("ns", widget({ generateName: "gen-" }));
    assert.equal(created.object.metadata.name, "gen-fresh");
    assert.deepEqual(drawn, ["gen-", "gen-", "gen-"], "one draw per attempt, from the request's prefix");
    const listed = await t.store.list("ns", {});
    assert.deepEqual(listed.items.map((c) => c.object.metadata.name), ["gen-fresh", "gen-taken1", "gen-taken2"], "nothing overwritten");
  } finally {
    await t.close();
  }
});

test("generateName: when all 8 attempts clash, upstream's 409 AlreadyExists with retryAfterSeconds", async () => {
  let draws = 0;
  const t = await widgetStore(true, { generateName: () => (draws++, "gen-always") });
  try {
    const taken = await t.store.create("ns", widget({ name: "gen-always" }));
    const err = await t.store.create("ns", widget({ generateName: "gen-" })).then(
      () => assert.fail("expected a 409"),
      (e: unknown) => e,
    );
    assert.ok(isApiError(err, "AlreadyExists"), String(err));
    assert.equal(draws, 8);
    assert.equal(err.code, 409);
    assert.equal(err.message, 'widgets.samples.orch.io "gen-always" already exists, the server was not able to generate a unique name for the object');
    assert.deepEqual(err.status.details, { name: "gen-always", group: "samples.orch.io", kind: "widgets", retryAfterSeconds: 1 });
    const still = await t.store.get("ns", "gen-always");
    assert.equal(still.object.metadata.uid, taken.object.metadata.uid, "the stored object is untouched");

    // A name the client chose is not retried and keeps the plain message.
    draws = 0;
    const named = await t.store.create("ns", widget({ name: "gen-always" })).catch((e: unknown) => e);
    assert.ok(isApiError(named, "AlreadyExists"));
    assert.equal(named.message, 'widgets.samples.orch.io "gen-always" already exists');
    assert.equal(draws, 0);
  } finally {
    await t.close();
  }
});
