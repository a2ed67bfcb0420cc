import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePath } from "../routing.js";
import { requestAttributes, type RequestAttributes } from "./request-info.js";

const attributesOf = (method: string, target: string): RequestAttributes => {
  const url = new URL(target, "https://localhost");
  return requestAttributes(method, url, parsePath(url.pathname));
};

/** verb, group, resource, subresource, namespace, name: the columns an authorizer reads. */
type Row = [method: string, target: string, verb: string, group: string, resource: string, subresource: string, namespace: string, name: string];

test("request attributes of resource requests, as upstream's RequestInfo", () => {
  const P = "/api/v1/namespaces/team-b/pods";
  const D = "/apis/apps/v1/namespaces/team-b/deployments";
  const rows: Row[] = [
    ["GET", P, "list", "", "pods", "", "team-b", ""],
    ["HEAD", P, "list", "", "pods", "", "team-b", ""],
    ["GET", `${P}?watch=true`, "watch", "", "pods", "", "team-b", ""],
    ["GET", `${P}?watch=1`, "watch", "", "pods", "", "team-b", ""],
    ["GET", `${P}?watch`, "watch", "", "pods", "", "team-b", ""],
    ["GET", `${P}?watch=false`, "list", "", "pods", "", "team-b", ""],
    // A list or watch pinned to one object names it (kubectl get pod/web -w).
    ["GET", `${P}?watch=true&fieldSelector=metadata.name%3Dweb`, "watch", "", "pods", "", "team-b", "web"],
    ["GET", `${P}?fieldSelector=metadata.name%3D%3Dweb`, "list", "", "pods", "", "team-b", "web"],
    ["GET", `${P}?fieldSelector=metadata.name!%3Dweb`, "list", "", "pods", "", "team-b", ""],
    ["GET", `${P}?fieldSelector=not-a-selector`, "list", "", "pods", "", "team-b", ""],
    ["GET", `${P}?fieldSelector=metadata.name%3D..`, "list", "", "pods", "", "team-b", ""],
    ["GET", `${P}/web`, "get", "", "pods", "", "team-b", "web"],
    ["GET", `${P}/web?watch=true`, "get", "", "pods", "", "team-b", "web"],
    ["POST", P, "create", "", "pods", "", "team-b", ""],
    ["PUT", `${P}/web`, "update", "", "pods", "", "team-b", "web"],
    ["PATCH", `${P}/web`, "patch", "", "pods", "", "team-b", "web"],
    ["DELETE", `${P}/web`, "delete", "", "pods", "", "team-b", "web"],
    ["DELETE", P, "deletecollection", "", "pods", "", "team-b", ""],
    // Subresources.
    ["PUT", `${P}/web/status`, "update", "", "pods", "status", "team-b", "web"],
    ["PATCH", `${P}/web/status`, "patch", "", "pods", "status", "team-b", "web"],
    ["POST", `${P}/web/binding`, "create", "", "pods", "binding", "team-b", "web"],
    ["POST", `${P}/web/eviction`, "create", "", "pods", "eviction", "team-b", "web"],
    ["GET", `${P}/web/log`, "get", "", "pods", "log", "team-b", "web"],
    // Connect subresources keep the method's verb (RBAC grants `create` on pods/exec for kubectl's POST).
    ["POST", `${P}/web/exec?command=ls`, "create", "", "pods", "exec", "team-b", "web"],
    ["GET", `${P}/web/attach`, "get", "", "pods", "attach", "team-b", "web"],
    ["GET", `${D}/web/scale`, "get", "apps", "deployments", "scale", "team-b", "web"],
    ["PUT", `${D}/web/scale`, "update", "apps", "deployments", "scale", "team-b", "web"],
    // All namespaces, and cluster-scoped kinds.
    ["GET", "/api/v1/pods", "list", "", "pods", "", "", ""],
    ["GET", "/apis/apps/v1/deployments?watch=true", "watch", "apps", "deployments", "", "", ""],
    ["GET", "/api/v1/nodes/n1", "get", "", "nodes", "", "", "n1"],
    ["PATCH", "/api/v1/nodes/n1/status", "patch", "", "nodes", "status", "", "n1"],
    ["DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses", "deletecollection", "scheduling.k8s.io", "priorityclasses", "", "", ""],
    // A namespace's own paths are in that namespace (a RoleBinding there can grant reading it).
    ["GET", "/api/v1/namespaces", "list", "", "namespaces", "", "", ""],
    ["GET", "/api/v1/namespaces/team-b", "get", "", "namespaces", "", "team-b", "team-b"],
    ["PUT", "/api/v1/namespaces/team-b/finalize", "update", "", "namespaces", "finalize", "team-b", "team-b"],
    ["DELETE", "/api/v1/namespaces/team-b", "delete", "", "namespaces", "", "team-b", "team-b"],
    // A method no verb stands for.
    ["OPTIONS", P, "", "", "pods", "", "team-b", ""],
  ];
  for (const [method, target, ...want] of rows) {
    const a = attributesOf(method, target);
    assert.equal(a.resourceRequest, true, `${method} ${target}`);
    assert.deepEqual([a.verb, a.apiGroup, a.resource, a.subresource, a.namespace, a.name], want, `${method} ${target}`);
  }
  const d = attributesOf("GET", `${D}/web`);
  assert.equal(d.apiVersion, "v1");
  assert.equal(d.path, `${D}/web`);
});

test("request attributes of non-resource URLs: the method in lower case and the path", () => {
  const rows: Array<[method: string, target: string]> = [
    ["GET", "/healthz"],
    ["GET", "/readyz/etcd"],
    ["GET", "/version"],
    ["GET", "/metrics"],
    ["GET", "/openapi/v2"],
    ["GET", "/openapi/v3/apis/apps/v1"],
    ["GET", "/api"],
    ["GET", "/api/v1"],
    ["GET", "/apis"],
    ["GET", "/apis/apps"],
    ["GET", "/apis/apps/v1/"],
    ["POST", "/logs"],
    ["DELETE", "/unknown/path"],
  ];
  for (const [method, target] of rows) {
    const a = attributesOf(method, target);
    assert.deepEqual(a, {
      resourceRequest: false, verb: method.toLowerCase(), apiGroup: "", apiVersion: "", resource: "", subresource: "", namespace: "", name: "", path: target,
    }, `${method} ${target}`);
  }
});
