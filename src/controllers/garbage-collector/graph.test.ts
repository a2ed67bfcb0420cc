// The owner graph on its own: edges from ownerReferences, virtual owners,
// and which uids each change sends back to the collector.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { DiscoveredResource } from "../../client/index.js";
import type { ApiObject, OwnerReference } from "../../machinery/index.js";
import { OwnerGraph, deletingDependents } from "./graph.js";

const WIDGETS: DiscoveredResource = {
  group: "samples.orch.io", version: "v1", resource: "widgets", namespaced: true, kind: "Widget",
  singularName: "widget", verbs: ["delete", "get", "list", "watch"], shortNames: [], categories: [], subresources: [], preferred: true,
};

const obj = (uid: string, meta: Partial<ApiObject["metadata"]> = {}): ApiObject => ({
  apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: { uid, name: uid, namespace: "ns", ...meta },
});
const ref = (uid: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", name: uid, uid, ...extra });
const sorted = (s: Set<string>) => [...s].sort();

test("a dependent of an unseen owner is looked at; once the owner is seen it is not", () => {
  const g = new OwnerGraph();
  const w = g.upsert(obj("child", { ownerReferences: [ref("owner")] }), WIDGETS);
  assert.deepEqual(sorted(w.attemptToDelete), ["child"], "the owner is virtual: it may not exist");
  assert.equal(g.get("owner")?.observed, false);
  assert.deepEqual([...g.get("owner")!.dependents], ["child"]);
  const seen = g.upsert(obj("owner"), WIDGETS);
  assert.deepEqual(sorted(seen.attemptToDelete), []);
  assert.equal(g.get("owner")?.observed, true);
  assert.deepEqual(sorted(g.upsert(obj("child", { ownerReferences: [ref("owner")], labels: { a: "b" } }), WIDGETS).attemptToDelete), []);
});

test("deleting an owner sends its dependents back; a virtual node goes with its last dependent", () => {
  const g = new OwnerGraph();
  g.upsert(obj("owner"), WIDGETS);
  g.upsert(obj("a", { ownerReferences: [ref("owner")] }), WIDGETS);
  g.upsert(obj("b", { ownerReferences: [ref("owner")] }), WIDGETS);
  assert.deepEqual(sorted(g.remove(obj("owner")).attemptToDelete), ["a", "b"]);
  assert.equal(g.get("owner")?.observed, false, "kept as a virtual node while dependents point at it");
  g.remove(obj("a"));
  g.upsert(obj("b"), WIDGETS); // b lets go of the owner
  assert.equal(g.get("owner"), undefined);
  assert.equal(g.size, 1);
});

test("foreground: entering it sends the owner and all dependents; blocking dependents are those that say so", () => {
  const g = new OwnerGraph();
  g.upsert(obj("owner"), WIDGETS);
  g.upsert(obj("blocker", { ownerReferences: [ref("owner", { blockOwnerDeletion: true })] }), WIDGETS);
  g.upsert(obj("free", { ownerReferences: [ref("owner")] }), WIDGETS);
  const w = g.upsert(obj("owner", { deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["foregroundDeletion"] }), WIDGETS);
  assert.ok(deletingDependents(g.get("owner")));
  assert.deepEqual(sorted(w.attemptToDelete), ["blocker", "free", "owner"]);
  assert.deepEqual(g.blockingDependents("owner").map((n) => n.uid), ["blocker"]);
  // A dependent's change brings the waiting owner back; so does its removal.
  assert.ok(g.upsert(obj("blocker", { ownerReferences: [ref("owner", { blockOwnerDeletion: true })], deletionTimestamp: "2026-01-01T00:00:00Z" }), WIDGETS).attemptToDelete.has("owner"));
  assert.deepEqual(sorted(g.remove(obj("blocker")).attemptToDelete), ["owner"]);
  assert.deepEqual(g.blockingDependents("owner"), []);
});

test("orphan: an owner marked with the orphan finalizer goes to the orphan queue", () => {
  const g = new OwnerGraph();
  const w = g.upsert(obj("owner", { deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["orphan"] }), WIDGETS);
  assert.deepEqual(sorted(w.attemptToOrphan), ["owner"]);
  assert.deepEqual(sorted(g.upsert(obj("x"), WIDGETS).attemptToOrphan), []);
});
