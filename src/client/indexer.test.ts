// The indexed cache on its own: the built-in namespace index, custom indexes with several values per
// object, an update moving an object between values, delete removing it, indexes added late, conflicts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Indexer, NAMESPACE_INDEX } from "./indexer.js";

interface Obj {
  metadata: { namespace?: string; name: string; labels?: Record<string, string> };
  spec?: { nodeName?: string };
}

const pod = (namespace: string | undefined, name: string, nodeName?: string, labels?: Record<string, string>): Obj => ({
  metadata: { ...(namespace ? { namespace } : {}), name, ...(labels ? { labels } : {}) },
  ...(nodeName ? { spec: { nodeName } } : {}),
});
const byNode = (o: Obj) => (o.spec?.nodeName ? [o.spec.nodeName] : []);
const byLabelValues = (o: Obj) => Object.values(o.metadata.labels ?? {});

test("the namespace index is built in and leaves cluster-scoped objects out", () => {
  const idx = new Indexer<Obj>();
  idx.set("a/p1", pod("a", "p1"));
  idx.set("b/p2", pod("b", "p2"));
  idx.set("a/p3", pod("a", "p3"));
  idx.set("n1", pod(undefined, "n1"));
  assert.deepEqual(idx.indexNames(), [NAMESPACE_INDEX]);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "a"), ["a/p1", "a/p3"]);
  assert.deepEqual(idx.byIndex(NAMESPACE_INDEX, "b").map((o) => o.metadata.name), ["p2"]);
  assert.deepEqual(idx.indexValues(NAMESPACE_INDEX).sort(), ["a", "b"]);
  assert.deepEqual(idx.byIndex(NAMESPACE_INDEX, "none"), []);
});

test("an update that moves an object between index values refiles it; delete removes it", () => {
  const idx = new Indexer<Obj>();
  idx.addIndexers({ node: byNode });
  idx.set("ns/p", pod("ns", "p"));
  assert.deepEqual(idx.indexValues("node"), [], "an object with no value is in no bucket");
  idx.set("ns/p", pod("ns", "p", "node-1"));
  assert.deepEqual(idx.indexKeys("node", "node-1"), ["ns/p"]);
  const old = idx.set("ns/p", pod("ns", "p", "node-2"));
  assert.equal(old?.spec?.nodeName, "node-1", "set returns what was there");
  assert.deepEqual(idx.indexKeys("node", "node-1"), []);
  assert.deepEqual(idx.indexKeys("node", "node-2"), ["ns/p"]);
  assert.deepEqual(idx.indexValues("node"), ["node-2"], "an emptied value is dropped");
  assert.equal(idx.byIndex("node", "node-2")[0]?.spec?.nodeName, "node-2", "byIndex returns the current object");

  assert.equal(idx.delete("ns/p")?.metadata.name, "p");
  assert.deepEqual(idx.indexKeys("node", "node-2"), []);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "ns"), []);
  assert.deepEqual(idx.indexValues("node"), []);
  assert.equal(idx.delete("ns/p"), undefined, "deleting what is not there is a no-op");
  assert.equal(idx.size, 0);
});

test("an index with several values per object keeps the values that stayed", () => {
  const idx = new Indexer<Obj>();
  idx.addIndexers({ labels: byLabelValues });
  idx.set("ns/p", pod("ns", "p", undefined, { a: "x", b: "y" }));
  idx.set("ns/q", pod("ns", "q", undefined, { a: "y" }));
  assert.deepEqual(idx.indexKeys("labels", "y"), ["ns/p", "ns/q"]);
  idx.set("ns/p", pod("ns", "p", undefined, { a: "y", b: "z" }));
  assert.deepEqual(idx.indexKeys("labels", "x"), []);
  assert.deepEqual(idx.indexKeys("labels", "y"), ["ns/p", "ns/q"], "a value kept is not refiled");
  assert.deepEqual(idx.indexKeys("labels", "z"), ["ns/p"]);
});

test("a throwing index function is reported and files the object nowhere; the cache and other indexes stay right", () => {
  const errors: string[] = [];
  const idx = new Indexer<Obj>({ onIndexError: (index, key, err) => errors.push(`${index} ${key} ${(err as Error).message}`) });
  idx.addIndexers({ node: (o) => [o.spec!.nodeName!.toUpperCase()] });
  idx.set("ns/bound", pod("ns", "bound", "n1"));
  idx.set("ns/unbound", pod("ns", "unbound"));
  assert.deepEqual(errors.map((e) => e.split(" ").slice(0, 2).join(" ")), ["node ns/unbound"]);
  assert.deepEqual(idx.indexKeys("node", "N1"), ["ns/bound"]);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/bound", "ns/unbound"]);
  idx.set("ns/unbound", pod("ns", "unbound", "n2"));
  assert.deepEqual(idx.indexKeys("node", "N2"), ["ns/unbound"], "an update that makes it indexable files it");
  assert.equal(idx.delete("ns/unbound")?.metadata.name, "unbound");
  assert.deepEqual(idx.indexValues("node"), ["N1"]);
});

test("an index added late is built from what is cached; the same function again is a no-op, another one a conflict", () => {
  const idx = new Indexer<Obj>();
  idx.set("ns/a", pod("ns", "a", "n1"));
  idx.set("ns/b", pod("ns", "b", "n1"));
  idx.addIndexers({ node: byNode });
  assert.deepEqual(idx.indexKeys("node", "n1"), ["ns/a", "ns/b"]);
  idx.addIndexers({ node: byNode });
  assert.deepEqual(idx.indexKeys("node", "n1"), ["ns/a", "ns/b"]);
  assert.throws(() => idx.addIndexers({ other: byLabelValues, node: (o) => [o.metadata.name] }), /indexer conflict: an index named "node" already exists/);
  assert.deepEqual(idx.indexNames(), [NAMESPACE_INDEX, "node"], "a rejected batch adds nothing");
  assert.throws(() => idx.byIndex("nope", "x"), /index "nope" does not exist/);
  assert.throws(() => idx.indexKeys("nope", "x"), /index "nope" does not exist/);
});
