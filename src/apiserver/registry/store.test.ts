// The registry store over a real lmdb store. Here: the ListFromCacheSnapshot
// gate (seed 000, "Resource version semantics", Exact lists), whose results are
// the same either way, so the storage is wrapped to count the reads that reach
// it; and generateName's retry on a real clash with a stored name.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { namingFor } from "../../machinery/naming.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import { CachedStorage } from "../../storage/cacher/index.js";
import { LmdbStorage } from "../../storage/lmdb/index.js";
import type { GetOptions, Storage } from "../../storage/index.js";
import { guaranteedUpdate } from "../../storage/guaranteed-update.js";
import { ApiRegistry } from "../api-registry.js";
import { sampleApi } from "../testing/sample-api.js";
import { SchemaDefaulter } from "./defaults.js";
import { RegistryStore } from "./store.js";

/**
 * The real storage, counting the revisioned lists (Exact reads) and the key
 * reads it serves. guaranteedUpdate runs the shared implementation (as both
 * backends do) over the counting wrapper, so its own reads are counted too.
 */
function counting(storage: Storage): { storage: Storage; exactLists(): number; gets(): number } {
  let exact = 0;
  let gets = 0;
  const wrapped: Storage = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === "list") {
        return (prefix: string, options?: { revision?: number }) => {
          if (options?.revision !== undefined) exact++;
          return target.list(prefix, options);
        };
      }
      if (prop === "get") return (key: string, options?: GetOptions) => (gets++, target.get(key, options));
      if (prop === "guaranteedUpdate") return (...args: Parameters<Storage["guaranteedUpdate"]>) => guaranteedUpdate(wrapped, ...args);
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage: wrapped, exactLists: () => exact, gets: () => gets };
}

async function widgetStore(snapshots: boolean, options: { generateName?: (prefix: string) => string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "orch-registry-store-"));
  const lmdb = await LmdbStorage.open({ dataDir: dir });
  const counted = counting(lmdb);
  const naming = namingFor();
  const registry = new ApiRegistry([sampleApi], naming);
  const def = registry.find("samples.orch.io", "widgets")!;
  let store: RegistryStore;
  let decodes = 0;
  const cacher = new CachedStorage<ApiObject>({
    backend: counted.storage,
    prefix: "/registry/samples.orch.io/widgets/",
    decode: (kv) => (decodes++, store.decode(kv)),
    withRevision: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
    snapshots,
  });
  store = new RegistryStore(def, { storage: cacher, naming, defaulter: new SchemaDefaulter(registry.schemas), sharding: false, ...options });
  await cacher.start();
  return {
    store,
    exactReads: counted.exactLists,
    /** Decodes by the door (its answers and the cache's events). */
    decodes: () => decodes,
    lmdb,
    keyReads: counted.gets,
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

test("an update starts from the cached object: no read of the key reaches the backend", async () => {
  const t = await widgetStore(true);
  try {
    const created = await t.store.create("ns", widget({ name: "w" }));
    await t.store.get("ns", "w", { resourceVersion: created.object.metadata.resourceVersion }); // the cache has it
    const before = t.keyReads();
    const updated = await t.store.modify("ns", "w", (obj) => ({ ...obj, metadata: { ...obj.metadata, labels: { a: "b" } } }));
    assert.deepEqual(updated.object.metadata.labels, { a: "b" });
    assert.equal(t.keyReads() - before, 0);
    // A PUT naming the version the cache holds: the same; a stale one is still a 409.
    await t.store.get("ns", "w", { resourceVersion: updated.object.metadata.resourceVersion });
    const put = await t.store.update("ns", "w", { ...updated.object, metadata: { ...updated.object.metadata, labels: { a: "c" } } });
    assert.equal(t.keyReads() - before, 0);
    const stale = await t.store.update("ns", "w", updated.object).catch((e: unknown) => e);
    assert.ok(isApiError(stale, "Conflict"), String(stale));
    assert.deepEqual(put.object.object.metadata.labels, { a: "c" });
  } finally {
    await t.close();
  }
});

test("a create's answer and cached record are its own object, laid out exactly as decoding the stored bytes gives it", async () => {
  const t = await widgetStore(true);
  try {
    const before = t.decodes();
    const created = await t.store.create("ns", {
      kind: "Widget",
      spec: { color: "blue", size: 3, tags: ["a", "b"], empty: {} },
      metadata: { labels: { z: "1", a: "2" }, name: "w", annotations: { "1": "numeric key first" } },
      apiVersion: "samples.orch.io/v1",
    } as ApiObject);
    assert.equal(t.decodes() - before, 0, "nothing decoded");
    const kv = (await t.lmdb.get(created.key)).kv!;
    assert.equal(JSON.stringify(created.object), JSON.stringify(t.store.decode(kv)), "member for member, in the same order");
    assert.equal(created.object.metadata.resourceVersion, String(kv.modRevision));
    assert.equal(await t.store.get("ns", "w", { resourceVersion: created.object.metadata.resourceVersion }), created, "the cache's record is the answer's");
  } finally {
    await t.close();
  }
});

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
