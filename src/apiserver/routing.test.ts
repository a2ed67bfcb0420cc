import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePath } from "./routing.js";

const r = (group: string, version: string, namespace: string | undefined, resource: string, name?: string, subresource?: string) => ({
  kind: "resource",
  group,
  version,
  namespace,
  resource,
  name,
  subresource,
});

test("resource paths as the seed's table", () => {
  const cases: Array<[string, unknown]> = [
    ["/api/v1/pods", r("", "v1", undefined, "pods")],
    ["/api/v1/namespaces/default/pods", r("", "v1", "default", "pods")],
    ["/api/v1/namespaces/default/pods/web", r("", "v1", "default", "pods", "web")],
    ["/api/v1/namespaces/default/pods/web/status", r("", "v1", "default", "pods", "web", "status")],
    ["/api/v1/namespaces", r("", "v1", undefined, "namespaces")],
    ["/api/v1/namespaces/default", r("", "v1", undefined, "namespaces", "default")],
    ["/api/v1/namespaces/default/status", r("", "v1", undefined, "namespaces", "default", "status")],
    ["/api/v1/namespaces/default/finalize", r("", "v1", undefined, "namespaces", "default", "finalize")],
    ["/api/v1/nodes/n1/status", r("", "v1", undefined, "nodes", "n1", "status")],
    ["/apis/apps/v1/deployments", r("apps", "v1", undefined, "deployments")],
    ["/apis/apps/v1/namespaces/ns1/deployments/d/scale", r("apps", "v1", "ns1", "deployments", "d", "scale")],
    ["/apis/coordination.orch.io/v1beta1/namespaces/x/leases/", r("coordination.orch.io", "v1beta1", "x", "leases")],
    ["/api/v1/namespaces/default/configmaps/a%2Fb", r("", "v1", "default", "configmaps", "a/b")],
  ];
  for (const [path, expected] of cases) assert.deepEqual(parsePath(path), expected, path);
});

test("discovery and other paths", () => {
  assert.deepEqual(parsePath("/api"), { kind: "discovery", group: "", version: undefined, legacy: true });
  assert.deepEqual(parsePath("/api/v1"), { kind: "discovery", group: "", version: "v1", legacy: true });
  assert.deepEqual(parsePath("/apis"), { kind: "discovery", group: undefined, version: undefined, legacy: false });
  assert.deepEqual(parsePath("/apis/apps"), { kind: "discovery", group: "apps", version: undefined, legacy: false });
  assert.deepEqual(parsePath("/apis/apps/v1"), { kind: "discovery", group: "apps", version: "v1", legacy: false });
  assert.equal(parsePath("/version").kind, "other");
  // What follows a subresource is kept as sent (only proxy serves it: handlers/subresources/proxy.ts).
  assert.deepEqual(parsePath("/api/v1/namespaces/a/pods/b/c/d%2Fe/"), { ...r("", "v1", "a", "pods", "b", "c"), subpath: "/d%2Fe/" });
  assert.deepEqual(parsePath("/api/v1/nodes/n:1/proxy/x/y"), { ...r("", "v1", undefined, "nodes", "n:1", "proxy"), subpath: "/x/y" });
  assert.equal(parsePath("/api/v1/pods//x").kind, "other");
  assert.equal(parsePath("/api/v1/pods/%E0%A4%A").kind, "other");
});
