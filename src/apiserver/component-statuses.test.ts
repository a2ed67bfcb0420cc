import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import { eventually } from "../controllers/testing.js";
import { startTestServer, type TestServer } from "./testing/harness.js";
import { startComponentStatuses } from "./component-statuses.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const CS = "/api/v1/componentstatuses";

test("component statuses: etcd-0 from the storage, components from their /healthz; read only; kubectl's table", async () => {
  // The server's own loop probes the default ports; etcd-0 is the storage's answer.
  const etcd = await eventually("etcd-0", async () => {
    const r = await t.request("GET", `${CS}/etcd-0`);
    return r.status === 200 ? r.json : undefined;
  });
  assert.deepEqual(etcd.conditions, [{ type: "Healthy", status: "True", message: '{"health":"true","reason":""}' }]);
  const list = await t.request("GET", CS);
  assert.deepEqual(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ["controller-manager", "etcd-0", "scheduler"]);
  const created = await t.request("POST", CS, { body: { apiVersion: "v1", kind: "ComponentStatus", metadata: { name: "x" } } });
  assert.equal(created.status, 405);
  assert.equal((await t.request("DELETE", `${CS}/etcd-0`)).status, 405);

  // Probes of a healthy /healthz (this server's) and of a closed port.
  const store = t.server.stores.for({ group: "", resource: "componentstatuses" })!;
  const stop = startComponentStatuses({
    store,
    storageHealthy: () => true,
    probes: [{ name: "healthy-one", url: `${t.server.url}/healthz` }, { name: "gone", url: "https://127.0.0.1:1/healthz" }],
    intervalMs: 60_000,
    log: () => {},
  });
  try {
    const table = await eventually("table", async () => {
      const r = await t.request("GET", CS, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } });
      const rows = (r.json.rows ?? []) as { cells: string[] }[];
      return rows.some((row) => row.cells[0] === "gone") && rows.some((row) => row.cells[0] === "healthy-one") ? r.json : undefined;
    });
    assert.deepEqual(table.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Status", "Message", "Error"]);
    const byName = new Map((table.rows as { cells: string[] }[]).map((r) => [r.cells[0], r.cells]));
    assert.deepEqual(byName.get("healthy-one"), ["healthy-one", "Healthy", "ok", ""]);
    const gone = byName.get("gone")!;
    assert.equal(gone[1], "Unhealthy");
    assert.match(gone[3]!, /^Get "https:\/\/127.0.0.1:1\/healthz": connect ECONNREFUSED/);
  } finally {
    stop();
  }
});
