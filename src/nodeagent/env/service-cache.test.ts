// ServiceCache against the in-process API server: services by namespace from
// the watch (a service created later shows up without another list), and a
// start that cannot get the first list fails with upstream's error.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { Service } from "../../api/core/types.js";
import { SERVICES, NAMESPACES } from "../../api/resource-refs.js";
import { RestClient } from "../../client/index.js";
import { serveBuiltinApi } from "../../client/testing/test-server.js";
import { ServiceCache } from "./service-cache.js";

let client!: RestClient;
serveBuiltinApi((c) => (client = c));
const stop = new AbortController();
after(() => stop.abort());

const service = (namespace: string, name: string): Service => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace }, spec: { ports: [{ port: 80 }] } }) as Service;

test("services of one namespace come from the watch; one created later appears without a list per call", async () => {
  for (const ns of ["svc-a", "svc-b"]) await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  await client.create(SERVICES, service("svc-a", "web"), { namespace: "svc-a" });
  await client.create(SERVICES, service("svc-b", "db"), { namespace: "svc-b" });
  const cache = new ServiceCache(client, stop.signal);
  assert.deepEqual((await cache.services("svc-a")).map((s) => s.metadata.name), ["web"]);
  await client.create(SERVICES, service("svc-a", "api"), { namespace: "svc-a" });
  const deadline = Date.now() + 10_000;
  let names: string[] = [];
  while (Date.now() < deadline) {
    names = (await cache.services("svc-a")).map((s) => s.metadata.name!).sort();
    if (names.length === 2) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(names, ["api", "web"]);
  assert.deepEqual((await cache.services("svc-b")).map((s) => s.metadata.name), ["db"]);
});

test("without a first list the call fails with upstream's error (the start is retried), instead of empty variables", async () => {
  const unreachable = new RestClient({ server: "https://127.0.0.1:1" });
  const local = new AbortController();
  try {
    await assert.rejects(new ServiceCache(unreachable, local.signal, 200).services("default"), /services have not yet been read at least once/);
  } finally {
    local.abort();
    unreachable.close();
  }
});
