// Two API server replicas over one etcd: a write through one is seen by a
// watch on the other with the same resourceVersion (revisions are etcd's),
// and the generic behaviour holds on the etcd backend too.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { etcdSkipReason, startEtcd, type EtcdServer } from "../storage/etcd/testing/etcd-server.js";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const widget = (name: string) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name }, spec: { color: "red" } });

describe("API server replicas on etcd", { skip: etcdSkipReason() ?? false }, () => {
  let etcd: EtcdServer;
  let one: TestServer;
  let two: TestServer;
  before(async () => {
    etcd = await startEtcd();
    const storage = { backend: "etcd" as const, etcdServers: etcd.endpoints, etcdPrefix: "/replicas" };
    one = await startTestServer({ modules: [sampleApi], storage });
    two = await startTestServer({ modules: [sampleApi], storage });
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await etcd?.stop();
  });

  test("a write through one replica reaches a watch on the other with the same resourceVersion", async () => {
    const list = (await two.request("GET", W)).json;
    const w = await two.watch(`${W}?watch=1&resourceVersion=${list.metadata.resourceVersion}`);
    const created = await one.request("POST", W, { body: widget("shared") });
    assert.equal(created.status, 201, created.text);
    const [event] = await w.next(1);
    assert.equal(event.type, "ADDED");
    assert.equal(event.object.metadata.resourceVersion, created.json.metadata.resourceVersion);
    assert.equal(event.object.metadata.uid, created.json.metadata.uid);
    const dup = await two.request("POST", W, { body: widget("shared") });
    assert.equal(dup.status, 409, "both replicas see one store");
    w.close();
  });

  test("consistent reads and stale updates across replicas", async () => {
    const c = (await one.request("POST", W, { body: widget("cross") })).json;
    const got = await two.request("GET", `${W}/cross`);
    assert.equal(got.status, 200, "a consistent get on the other replica sees the write at once");
    const listed = (await two.request("GET", `${W}?fieldSelector=metadata.name%3Dcross`)).json;
    assert.equal(listed.items.length, 1, "a consistent list on the other replica sees the write at once");
    const updated = await one.request("PUT", `${W}/cross`, { body: { ...c, spec: { color: "blue" } } });
    assert.equal(updated.status, 200);
    const stale = await two.request("PUT", `${W}/cross`, { body: { ...c, spec: { color: "green" } } });
    assert.equal(stale.status, 409);
  });
});
