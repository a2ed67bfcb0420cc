// The admission plugins read the watch caches (admission-reads.ts): what this
// server just wrote applies to the very next request, what another server
// wrote is found by a consistent read when the cache lacks it, and on etcd a
// pod create costs one etcd call (it cost 1.5-7.5 when every plugin read
// consistently). On both backends.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import { startTestServer, type TestServer } from "./testing/harness.js";
import { etcdSkipReason, startEtcd, type EtcdServer } from "../storage/etcd/testing/etcd-server.js";
import type { StorageConfig } from "../storage/index.js";

const pod = (name: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "c", image: "busybox" }] } });
const ns = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

/** etcd's unary gRPC calls handled so far (its /metrics). */
async function etcdCalls(endpoint: string): Promise<number> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  let n = 0;
  for (const line of text.split("\n")) if (line.startsWith("grpc_server_handled_total{") && line.includes('grpc_type="unary"')) n += Number(line.slice(line.lastIndexOf(" ") + 1));
  return n;
}

const backends: { name: string; skip: string | undefined; etcd: boolean }[] = [
  { name: "lmdb", skip: undefined, etcd: false },
  { name: "etcd", skip: etcdSkipReason(), etcd: true },
];

for (const backend of backends) {
  describe(`admission reads from the watch caches (${backend.name})`, { skip: backend.skip ?? false }, () => {
    let etcd: EtcdServer | undefined;
    let t: TestServer;
    let storage: Omit<StorageConfig, "dataDir" | "log"> = { backend: "lmdb" };
    before(async () => {
      if (backend.etcd) {
        etcd = await startEtcd();
        storage = { backend: "etcd", etcdServers: etcd.endpoints };
      }
      t = await startTestServer({ modules: builtinModules(), storage });
    });
    after(async () => {
      await t.close();
      await etcd?.stop();
    });

    test("this server's writes apply to the next request: namespace, LimitRange, quota and its delete, a terminating namespace", async () => {
      assert.equal((await t.request("POST", "/api/v1/namespaces", { body: ns("fresh") })).status, 201);
      const first = await t.request("POST", "/api/v1/namespaces/fresh/pods", { body: pod("p0") });
      assert.equal(first.status, 201, first.text);

      const lr = { apiVersion: "v1", kind: "LimitRange", metadata: { name: "defaults" }, spec: { limits: [{ type: "Container", default: { cpu: "300m" }, defaultRequest: { cpu: "200m" } }] } };
      assert.equal((await t.request("POST", "/api/v1/namespaces/fresh/limitranges", { body: lr })).status, 201);
      const limited = await t.request("POST", "/api/v1/namespaces/fresh/pods", { body: pod("p1") });
      assert.equal(limited.status, 201, limited.text);
      assert.deepEqual(limited.json.spec.containers[0].resources, { limits: { cpu: "300m" }, requests: { cpu: "200m" } });

      const Q = "/api/v1/namespaces/fresh/resourcequotas";
      const q = await t.request("POST", Q, { body: { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "none" }, spec: { hard: { pods: "2" } } } });
      assert.equal(q.status, 201, q.text);
      const st = await t.request("PUT", `${Q}/none/status`, { body: { ...q.json, status: { hard: { pods: "2" }, used: { pods: "2" } } } });
      assert.equal(st.status, 200, st.text);
      const over = await t.request("POST", "/api/v1/namespaces/fresh/pods", { body: pod("p2") });
      assert.equal(over.status, 403, over.text);
      assert.equal(over.json.message, 'pods "p2" is forbidden: exceeded quota: none, requested: pods=1, used: pods=2, limited: pods=2');
      assert.ok([200, 202].includes((await t.request("DELETE", `${Q}/none`)).status));
      const freed = await t.request("POST", "/api/v1/namespaces/fresh/pods", { body: pod("p2") });
      assert.equal(freed.status, 201, freed.text);

      assert.ok([200, 202].includes((await t.request("DELETE", "/api/v1/namespaces/fresh")).status));
      const gone = await t.request("POST", "/api/v1/namespaces/fresh/pods", { body: pod("p3") });
      assert.equal(gone.status, 403, gone.text);
      assert.equal(gone.json.message, 'namespaces "fresh" is forbidden: unable to create new content in namespace fresh because it is being terminated');
      const missing = await t.request("POST", "/api/v1/namespaces/nowhere/pods", { body: pod("p4") });
      assert.equal(missing.status, 404, missing.text);
      assert.equal(missing.json.message, 'namespaces "nowhere" not found');
    });

    test("what another API server wrote: a namespace the cache has not seen yet is found by a consistent read", { skip: backend.etcd ? false : "one lmdb store has one server" }, async () => {
      const other = await startTestServer({ modules: builtinModules(), storage });
      try {
        for (let i = 0; i < 5; i++) {
          assert.equal((await other.request("POST", "/api/v1/namespaces", { body: ns(`elsewhere-${i}`) })).status, 201);
          const created = await t.request("POST", `/api/v1/namespaces/elsewhere-${i}/pods`, { body: pod("p") });
          assert.equal(created.status, 201, created.text);
        }
      } finally {
        await other.close();
      }
    });

    test("a pod create is one etcd call (no consistent read per admission plugin)", { skip: backend.etcd ? false : "counts etcd's calls" }, async () => {
      assert.equal((await t.request("POST", "/api/v1/namespaces", { body: ns("calls") })).status, 201);
      assert.equal((await t.request("POST", "/api/v1/namespaces/calls/pods", { body: pod("warm") })).status, 201);
      const n = 30;
      const before = await etcdCalls(etcd!.endpoints[0]!);
      for (let i = 0; i < n; i++) assert.equal((await t.request("POST", "/api/v1/namespaces/calls/pods", { body: pod(`p${i}`) })).status, 201);
      const perCreate = ((await etcdCalls(etcd!.endpoints[0]!)) - before) / n;
      // One Txn each; the slack is the server's background reads meanwhile (component statuses, object counts).
      assert.ok(perCreate < 1.25, `${perCreate.toFixed(2)} etcd calls per pod create`);
    });
  });
}
