// pods/portforward in the API server: declared (discovery, verbs), its
// PodPortForwardOptions `ports` checked as upstream's query conversion, a pod
// without a node refused before anything is proxied, a plain request refused.
// The proxying itself is end to end in test/port-forward.e2e.test.ts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { ApiError } from "../../machinery/index.js";
import { startTestServer, upgradeRefusal, type TestServer } from "../testing/harness.js";
import { portForwardPorts } from "./pod-exec.js";

describe("pods/portforward", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "main", image: "busybox" }] } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod })).status, 201);
  });
  after(async () => {
    await t?.close();
  });

  test("ports: repeated or comma-separated int32s; anything else a 400 with Go's parse error", () => {
    assert.deepEqual(portForwardPorts(new URLSearchParams("ports=80&ports=8080,9090")), [80, 8080, 9090]);
    assert.deepEqual(portForwardPorts(new URLSearchParams("")), []);
    const refused = (q: string) => {
      try {
        portForwardPorts(new URLSearchParams(q));
      } catch (err) {
        assert.ok(err instanceof ApiError);
        return [err.status.code, err.status.message];
      }
      return undefined;
    };
    assert.deepEqual(refused("ports=http"), [400, 'strconv.ParseInt: parsing "http": invalid syntax']);
    assert.deepEqual(refused("ports=99999999999"), [400, 'strconv.ParseInt: parsing "99999999999": value out of range']);
  });

  test("listed in discovery with upstream's verbs", async () => {
    const r = await t.request("GET", "/api/v1");
    const pf = (r.json.resources as { name: string; verbs: string[]; kind: string }[]).find((x) => x.name === "pods/portforward");
    assert.deepEqual(pf && { verbs: [...pf.verbs].sort(), kind: pf.kind }, { verbs: ["create", "get"], kind: "PodPortForwardOptions" });
  });

  test("an upgrade: bad ports 400, a pod without a node 400, an unknown pod 404, all as Status objects", async () => {
    const bad = await upgradeRefusal(t, "POST", "/api/v1/namespaces/default/pods/web/portforward?ports=x");
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.body).message, 'strconv.ParseInt: parsing "x": invalid syntax');
    const noNode = await upgradeRefusal(t, "POST", "/api/v1/namespaces/default/pods/web/portforward?ports=80");
    assert.equal(noNode.status, 400);
    assert.equal(JSON.parse(noNode.body).message, "pod web does not have a host assigned");
    const get = await upgradeRefusal(t, "GET", "/api/v1/namespaces/default/pods/web/portforward");
    assert.equal(JSON.parse(get.body).message, "pod web does not have a host assigned");
    const unknown = await upgradeRefusal(t, "POST", "/api/v1/namespaces/default/pods/nope/portforward");
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.body).message, 'pods "nope" not found');
  });

  test("without an Upgrade: 400", async () => {
    const plain = await t.request("POST", "/api/v1/namespaces/default/pods/web/portforward");
    assert.equal(plain.status, 400, plain.text);
  });
});
