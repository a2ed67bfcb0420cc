// The RBAC authorizer's binding index follows the store: a binding created,
// changed or deleted is seen by the next requests (no stale grant after a
// delete, no missed one after a create), through users, groups and service
// accounts, with 1,000 other bindings in the namespace.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { TestServer } from "../testing/harness.js";
import { rbacTestServer } from "./testing.js";

const GROUP = "rbac.authorization.orch.io";
const BINDINGS = `/apis/${GROUP}/v1/namespaces/team-a/rolebindings`;

describe("RBAC binding index", () => {
  let t: TestServer;
  const get = (token: string) => t.request("GET", "/api/v1/namespaces/team-a/pods", { headers: { authorization: `Bearer ${token}` } });
  const eventually = async (token: string, status: number) => {
    for (let i = 0; (await get(token)).status !== status; i++) {
      assert.ok(i < 200, `${token} never got ${status}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const binding = (name: string, subjects: object[]) => ({
    apiVersion: `${GROUP}/v1`, kind: "RoleBinding", metadata: { name }, subjects, roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "view" },
  });

  before(async () => {
    t = (await rbacTestServer({
      alice: { name: "alice", groups: ["system:authenticated"] },
      carol: { name: "carol", groups: ["system:authenticated", "ops"] },
      sa: { name: "system:serviceaccount:team-a:ci", groups: ["system:authenticated", "system:serviceaccounts"] },
    })).t;
    await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } } });
    await Promise.all(Array.from({ length: 10 }, async (_, w) => {
      for (let i = w; i < 1000; i += 10) {
        const r = await t.request("POST", BINDINGS, { body: binding(`other-${i}`, [{ kind: "User", name: `user-${i}` }, { kind: "Group", name: `group-${i}` }]) });
        assert.equal(r.status, 201, r.text);
      }
    }));
  });
  after(() => t?.close());

  test("create, change and delete are seen by the next requests", async () => {
    assert.equal((await get("alice-token")).status, 403);
    assert.equal((await t.request("POST", BINDINGS, { body: binding("alice", [{ kind: "User", name: "alice" }]) })).status, 201);
    await eventually("alice-token", 200);
    const current = (await t.request("GET", `${BINDINGS}/alice`)).json;
    assert.equal((await t.request("PUT", `${BINDINGS}/alice`, { body: { ...current, subjects: [{ kind: "Group", name: "ops" }] } })).status, 200);
    await eventually("alice-token", 403);
    await eventually("carol-token", 200);
    assert.equal((await t.request("DELETE", `${BINDINGS}/alice`)).status, 200);
    await eventually("carol-token", 403);
    assert.equal((await t.request("POST", BINDINGS, { body: binding("ci", [{ kind: "ServiceAccount", name: "ci" }]) })).status, 201);
    await eventually("sa-token", 200);
    assert.equal((await get("alice-token")).status, 403);
  });
});
