// The Node authorizer and NodeRestriction against the real server
// (--authorization-mode=Node,RBAC, the default): a node reads the secrets,
// config maps and service-account tokens of pods bound to it and nothing
// else, writes only its own Node (no restricted labels, no taints), the
// status of its own pods, mirror pods bound to itself, and its own lease;
// upstream's 403 texts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { TokenAuthenticator, type UserInfo } from "../filters/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";

const NODE_GROUPS = ["system:nodes", "system:authenticated"];
const USERS: Record<string, UserInfo> = {
  n1: { name: "system:node:n1", groups: NODE_GROUPS },
  n3: { name: "system:node:n3", groups: NODE_GROUPS },
  nameless: { name: "system:node:", groups: NODE_GROUPS },
  alice: { name: "alice", groups: ["system:authenticated"] },
};
const MERGE = { "content-type": "application/merge-patch+json" };
const LEASES = "/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases";

const pod = (name: string, node: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default", ...(annotations ? { annotations } : {}) },
  spec: { nodeName: node, containers: [{ name: "c", image: "busybox" }], ...spec },
});

describe("Node authorizer and NodeRestriction", () => {
  let t: TestServer;
  const as = (who: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.request(method, path, { headers: { authorization: `Bearer ${who}-token`, ...headers }, ...(body !== undefined ? { body } : {}) });
  const admin = async (method: string, path: string, body: unknown) => {
    const r = await t.request(method, path, { body });
    assert.ok(r.status < 300, `${method} ${path}: ${r.text}`);
    return r.json;
  };
  const refused = (r: { status: number; json: { message: string }; text: string }, message: string) => {
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.message, message);
  };

  before(async () => {
    t = await startTestServer({ modules: builtinModules(), authenticators: [new TokenAuthenticator(new Map(Object.entries(USERS).map(([k, u]) => [`${k}-token`, u])))] });
    for (const name of ["n1", "n2"]) await admin("POST", "/api/v1/nodes", { apiVersion: "v1", kind: "Node", metadata: { name, labels: { "orch.io/hostname": name } } });
    for (const name of ["s1", "s2", "pull", "projected"]) await admin("POST", "/api/v1/namespaces/default/secrets", { apiVersion: "v1", kind: "Secret", metadata: { name }, data: { a: "Yg==" } });
    for (const name of ["c1", "c2"]) await admin("POST", "/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "b" } });
    await admin("POST", "/api/v1/namespaces/default/pods", pod("p1", "n1", {
      serviceAccountName: "sa1",
      imagePullSecrets: [{ name: "pull" }],
      volumes: [{ name: "v", secret: { secretName: "s1" } }, { name: "p", projected: { sources: [{ secret: { name: "projected" } }] } }, { name: "claim", persistentVolumeClaim: { claimName: "data" } }],
      containers: [{ name: "c", image: "busybox", envFrom: [{ configMapRef: { name: "c1" } }] }],
    }));
    await admin("POST", "/api/v1/namespaces/default/pods", pod("p2", "n2", { volumes: [{ name: "v", secret: { secretName: "s2" } }], containers: [{ name: "c", image: "busybox", env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "c2", key: "a" } } }] }] }));
  });
  after(() => t.close());

  test("SelfSubjectRulesReview: complete for other users under Node,RBAC, incomplete with upstream's reason for a node", async () => {
    const review = { apiVersion: "authorization.orch.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace: "default" } };
    const forAlice = await as("alice", "POST", "/apis/authorization.orch.io/v1/selfsubjectrulesreviews", review);
    assert.equal(forAlice.status, 201, forAlice.text);
    assert.equal(forAlice.json.status.incomplete, false);
    const forNode = await as("n1", "POST", "/apis/authorization.orch.io/v1/selfsubjectrulesreviews", review);
    assert.equal(forNode.status, 201, forNode.text);
    assert.equal(forNode.json.status.incomplete, true);
    assert.match(forNode.json.status.evaluationError, /node authorizer does not support user rule resolution/);
  });

  test("a node reads what its own pods use, and nothing of other nodes' pods", async () => {
    for (const name of ["s1", "pull", "projected"]) assert.equal((await as("n1", "GET", `/api/v1/namespaces/default/secrets/${name}`)).status, 200, name);
    assert.equal((await as("n1", "GET", "/api/v1/namespaces/default/configmaps/c1")).status, 200);
    refused(await as("n1", "GET", "/api/v1/namespaces/default/secrets/s2"),
      `secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`);
    assert.equal((await as("n1", "GET", "/api/v1/namespaces/default/configmaps/c2")).status, 403);
    refused(await as("n1", "GET", "/api/v1/namespaces/default/secrets"),
      `secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" in the namespace "default": No Object name found`);
    assert.match((await as("n1", "DELETE", "/api/v1/namespaces/default/secrets/s1")).json.message, /can only read resources of this type/);
    // Allowed by the authorizer (the claim kind is not served here: 404), refused for another claim.
    assert.equal((await as("n1", "GET", "/api/v1/namespaces/default/persistentvolumeclaims/data")).status, 404);
    assert.equal((await as("n1", "GET", "/api/v1/namespaces/default/persistentvolumeclaims/other")).status, 403);
    assert.notEqual((await as("n1", "POST", "/api/v1/namespaces/default/serviceaccounts/sa1/token", {})).status, 403);
    assert.match((await as("n1", "POST", "/api/v1/namespaces/default/serviceaccounts/sa2/token", {})).json.message, /no relationship found between node 'n1' and this object/);
    assert.match((await as("n1", "GET", "/api/v1/namespaces/default/serviceaccounts/sa1")).json.message, /can only create tokens for individual service accounts/);
    assert.equal((await as("n1", "GET", "/api/v1/pods")).status, 200, "node rules: pods are listed");
    assert.equal((await as("n1", "GET", "/api/v1/nodes")).status, 200);
    // Once the pod is gone, so is the relationship.
    await t.request("DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0");
    assert.equal((await as("n1", "GET", "/api/v1/namespaces/default/secrets/s1")).status, 403);
    await admin("POST", "/api/v1/namespaces/default/pods", pod("p1", "n1", { volumes: [{ name: "v", secret: { secretName: "s1" } }] }));
  });

  test("a node gets the volume bound to a claim its pod uses (pod → claim → volume), and no other", async () => {
    const volume = (name: string) => ({
      apiVersion: "v1", kind: "PersistentVolume", metadata: { name },
      spec: { capacity: { storage: "1Mi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: `/tmp/${name}` } },
    });
    for (const name of ["vol-data", "vol-other"]) await admin("POST", "/api/v1/persistentvolumes", volume(name));
    await admin("POST", "/api/v1/namespaces/default/persistentvolumeclaims", {
      apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Mi" } }, volumeName: "vol-data", storageClassName: "" },
    });
    await admin("POST", "/api/v1/namespaces/default/pods", pod("p3", "n1", { volumes: [{ name: "claim", persistentVolumeClaim: { claimName: "data" } }] }));
    // The authorizer reads the pods' and claims' watch caches.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++, await new Promise((r) => setTimeout(r, 20))) status = (await as("n1", "GET", "/api/v1/persistentvolumes/vol-data")).status;
    assert.equal(status, 200);
    refused(await as("n1", "GET", "/api/v1/persistentvolumes/vol-other"),
      `persistentvolumes "vol-other" is forbidden: User "system:node:n1" cannot get resource "persistentvolumes" in API group "" at the cluster scope: no relationship found between node 'n1' and this object`);
    assert.equal((await as("n3", "GET", "/api/v1/persistentvolumes/vol-data")).status, 403, "a node without the claim's pod");
    assert.match((await as("n1", "GET", "/api/v1/persistentvolumes")).json.message, /can only get individual resources of this type/);
  });

  test("a node writes only its own Node, without restricted labels or taint changes", async () => {
    assert.equal((await as("n1", "PATCH", "/api/v1/nodes/n1/status", { status: { conditions: [{ type: "Ready", status: "True" }] } }, MERGE)).status, 200);
    refused(await as("n1", "PATCH", "/api/v1/nodes/n2/status", { status: { conditions: [] } }, MERGE), `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`);
    refused(await as("n1", "PATCH", "/api/v1/nodes/n2", { metadata: { labels: { a: "b" } } }, MERGE), `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`);
    refused(await as("n1", "DELETE", "/api/v1/nodes/n2"), `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`);
    assert.equal((await as("n1", "PATCH", "/api/v1/nodes/n1", { metadata: { labels: { team: "a", "orch.io/hostname": "n1b", "node.orch.io/instance-type": "big", "nodeagent.orch.io/x": "y" } } }, MERGE)).status, 200);
    refused(await as("n1", "PATCH", "/api/v1/nodes/n1", { metadata: { labels: { "node-restriction.orch.io/trusted": "yes", "orch.io/role": "x" } } }, MERGE),
      `nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.orch.io/trusted, orch.io/role`);
    refused(await as("n1", "PATCH", "/api/v1/nodes/n1", { spec: { taints: [{ key: "a", effect: "NoSchedule" }] } }, MERGE), `nodes "n1" is forbidden: node "n1" is not allowed to modify taints`);
    refused(await as("n1", "POST", "/api/v1/nodes", { apiVersion: "v1", kind: "Node", metadata: { name: "n3" } }), `nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"`);
    refused(await as("n3", "POST", "/api/v1/nodes", { apiVersion: "v1", kind: "Node", metadata: { name: "n3", labels: { "node-restriction.orch.io/x": "y", "example.com/x": "y" } } }),
      `nodes "n3" is forbidden: node "n3" is not allowed to set the following labels: node-restriction.orch.io/x`);
    assert.equal((await as("n3", "POST", "/api/v1/nodes", { apiVersion: "v1", kind: "Node", metadata: { name: "n3", labels: { "orch.io/hostname": "n3" } }, spec: { taints: [{ key: "new", effect: "NoSchedule" }] } })).status, 201);
  });

  test("pods: status of its own pods, mirror pods bound to itself that use nothing, deletes of its own pods", async () => {
    assert.equal((await as("n1", "PATCH", "/api/v1/namespaces/default/pods/p1/status", { status: { phase: "Running" } }, MERGE)).status, 200);
    refused(await as("n1", "PATCH", "/api/v1/namespaces/default/pods/p2/status", { status: { phase: "Running" } }, MERGE),
      `pods "p2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`);
    refused(await as("n1", "PATCH", "/api/v1/namespaces/default/pods/p1", { metadata: { labels: { a: "b" } } }, MERGE),
      `pods "p1" is forbidden: User "system:node:n1" cannot patch resource "pods" in API group "" in the namespace "default"`);
    const mirror = { "orch.io/config.mirror": "abc" };
    assert.equal((await as("n1", "POST", "/api/v1/namespaces/default/pods", pod("m1", "n1", {}, mirror))).status, 201);
    refused(await as("n1", "POST", "/api/v1/namespaces/default/pods", pod("m2", "n1")),
      `pods "m2" is forbidden: pod does not have "orch.io/config.mirror" annotation, node "n1" can only create mirror pods`);
    refused(await as("n1", "POST", "/api/v1/namespaces/default/pods", pod("m3", "n2", {}, mirror)), `pods "m3" is forbidden: node "n1" can only create pods with spec.nodeName set to itself`);
    refused(await as("n1", "POST", "/api/v1/namespaces/default/pods", pod("m4", "n1", { volumes: [{ name: "v", secret: { secretName: "s2" } }] }, mirror)),
      `pods "m4" is forbidden: node "n1" can not create pods that reference secrets`);
    refused(await as("n1", "DELETE", "/api/v1/namespaces/default/pods/p2"), `pods "p2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`);
    assert.equal((await as("n1", "DELETE", "/api/v1/namespaces/default/pods/m1?gracePeriodSeconds=0")).status, 200);
  });

  test("leases: its own, in the node-lease namespace", async () => {
    const lease = (name: string) => ({ apiVersion: "coordination.orch.io/v1", kind: "Lease", metadata: { name }, spec: { holderIdentity: name } });
    assert.equal((await as("n1", "POST", LEASES, lease("n1"))).status, 201);
    assert.equal((await as("n1", "GET", `${LEASES}/n1`)).status, 200);
    refused(await as("n1", "POST", LEASES, lease("n2")), `leases.coordination.orch.io "n2" is forbidden: can only access node lease with the same name as the requesting node`);
    assert.match((await as("n1", "GET", `${LEASES}/n2`)).json.message, /can only access node lease with the same name as the requesting node$/);
    assert.match((await as("n1", "GET", "/apis/coordination.orch.io/v1/namespaces/default/leases/n1")).json.message, /can only access leases in the "orch-node-lease" system namespace$/);
    assert.match((await as("n1", "GET", LEASES)).json.message, /can only get, create, update, patch, or delete a node lease$/);
  });

  test("a node user without a name, and users that are not nodes", async () => {
    assert.match((await as("nameless", "GET", "/api/v1/nodes")).json.message, /unknown node for user "system:node:"$/);
    refused(await as("alice", "GET", "/api/v1/namespaces/default/secrets/s1"), `secrets "s1" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "default"`);
  });
});
