// The controller-owner index and what an owner's claim reads from it, on the
// informers' real cache (Indexer).

import { test } from "node:test";
import assert from "node:assert/strict";
import { Indexer } from "../client/indexer.js";
import type { ApiObject } from "../machinery/index.js";
import { CONTROLLER_UID_INDEX, claimCandidates, controllerUidIndex } from "./indexes.js";

const owner: ApiObject = { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "web", namespace: "a", uid: "u-web" } };

function pod(namespace: string, name: string, controllerUid?: string): ApiObject {
  const ownerReferences = controllerUid === undefined ? [] : [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "x", uid: controllerUid, controller: true }];
  return { apiVersion: "v1", kind: "Pod", metadata: { name, namespace, ownerReferences } };
}

test("an owner's claim candidates are its own objects and its namespace's orphans, and follow changes of owner", () => {
  const cache = new Indexer<ApiObject>();
  cache.addIndexers({ [CONTROLLER_UID_INDEX]: controllerUidIndex });
  const put = (o: ApiObject) => cache.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  put(pod("a", "mine", "u-web"));
  put(pod("a", "orphan"));
  put(pod("a", "theirs", "u-other"));
  put(pod("b", "orphan-elsewhere"));
  for (let i = 0; i < 100; i++) put(pod("a", `other-${i}`, "u-other"));
  const names = () => claimCandidates(cache, owner).map((o) => o.metadata.name).sort();
  assert.deepEqual(names(), ["mine", "orphan"]);
  // Adopted: still a candidate, once, under the owner's bucket.
  put(pod("a", "orphan", "u-web"));
  assert.deepEqual(names(), ["mine", "orphan"]);
  // Taken by another controller: no longer a candidate.
  put(pod("a", "mine", "u-other"));
  assert.deepEqual(names(), ["orphan"]);
  cache.delete("a/orphan");
  assert.deepEqual(names(), []);
  assert.deepEqual(controllerUidIndex(pod("b", "x")), ["orphans/b"], "orphans are bucketed by namespace");
});
