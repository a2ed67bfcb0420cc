// A delete that names no propagation policy: v1 ReplicationControllers orphan
// their dependents, as upstream's (conformance's "should orphan pods created
// by rc if deleteOptions.OrphanDependents is nil"); every other kind deletes
// them in the background. Explicit options win either way.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";

const RCS = "/api/v1/namespaces/default/replicationcontrollers";
const RSS = "/apis/apps/v1/namespaces/default/replicasets";
const template = { metadata: { labels: { app: "x" } }, spec: { containers: [{ name: "c", image: "busybox" }] } };

describe("default propagation policy of a delete", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
  });
  after(() => t.close());

  const rc = async (name: string) => {
    const r = await t.request("POST", RCS, { body: { apiVersion: "v1", kind: "ReplicationController", metadata: { name }, spec: { replicas: 0, selector: { app: "x" }, template } } });
    assert.equal(r.status, 201, r.text);
  };

  test("a ReplicationController deleted with no options is marked with the orphan finalizer", async () => {
    await rc("plain");
    const d = await t.request("DELETE", `${RCS}/plain`);
    assert.equal(d.status, 202, d.text); // marked, not removed: the garbage collector orphans the pods first
    assert.deepEqual(d.json.metadata.finalizers, ["orphan"]);
    assert.ok(d.json.metadata.deletionTimestamp);
    // With an empty body too (DeleteOptions with neither field).
    await rc("empty");
    assert.deepEqual((await t.request("DELETE", `${RCS}/empty`, { body: { kind: "DeleteOptions", apiVersion: "v1" } })).json.metadata.finalizers, ["orphan"]);
  });

  test("a ReplicationController deleted with Background or orphanDependents=false is removed at once", async () => {
    await rc("bg");
    const bg = await t.request("DELETE", `${RCS}/bg`, { body: { propagationPolicy: "Background" } });
    assert.equal(bg.status, 200, bg.text);
    assert.equal((await t.request("GET", `${RCS}/bg`)).status, 404);
    await rc("noorphan");
    assert.equal((await t.request("DELETE", `${RCS}/noorphan?orphanDependents=false`)).status, 200);
    assert.equal((await t.request("GET", `${RCS}/noorphan`)).status, 404);
  });

  test("a ReplicaSet deleted with no options is removed at once (Background)", async () => {
    const r = await t.request("POST", RSS, { body: { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "rs" }, spec: { replicas: 0, selector: { matchLabels: { app: "x" } }, template } } });
    assert.equal(r.status, 201, r.text);
    assert.equal((await t.request("DELETE", `${RSS}/rs`)).status, 200);
    assert.equal((await t.request("GET", `${RSS}/rs`)).status, 404);
  });
});
