// The authorization decision in audit events, as upstream's: every audited
// request's event carries `<authorization group>/decision` (allow or
// forbid) and `<authorization group>/reason` (RBAC's: the binding that
// allowed, or why nothing did; empty for system:masters), from the stage
// after authorization on. The group follows the naming table
// (authorization.orch.io here; authorization.k8s.io on the k8s.io profile).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestServer } from "../testing/harness.js";
import { rbacTestServer } from "./testing.js";

const GROUP = "rbac.authorization.orch.io";
const DECISION = "authorization.orch.io/decision";
const REASON = "authorization.orch.io/reason";

describe("authorization annotations in audit events", () => {
  let t: TestServer;
  let log: string;
  const events = () => readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  /** The request's events, found by its Audit-ID. */
  const eventsOf = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const found = events().filter((e) => e.auditID === id);
      if (found.some((e) => e.stage === "ResponseComplete")) return found;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no ResponseComplete event for ${id}`);
  };
  const request = async (id: string, token: string | undefined, path: string) => {
    await t.request("GET", path, { headers: { "audit-id": id, ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) } });
    return eventsOf(id);
  };

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-audit-authz-"));
    writeFileSync(join(dir, "policy.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n");
    log = join(dir, "audit.log");
    const s = await rbacTestServer({ alice: { name: "alice", groups: ["system:authenticated"] } }, { audit: { policyFile: join(dir, "policy.yaml"), logPath: log } });
    t = s.t;
    await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } } });
    await t.request("POST", `/apis/${GROUP}/v1/namespaces/team-a/rolebindings`, {
      body: { apiVersion: `${GROUP}/v1`, kind: "RoleBinding", metadata: { name: "alice-view" }, subjects: [{ kind: "User", name: "alice" }], roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "view" } },
    });
    await s.cached("rolebindings", 1, "team-a");
  });
  after(() => t?.close());

  test("allowed by a RoleBinding: allow, and the binding RBAC names", async () => {
    const evs = await request("allowed-1", "alice-token", "/api/v1/namespaces/team-a/pods");
    const done = evs.find((e) => e.stage === "ResponseComplete");
    assert.equal(done.responseStatus.code, 200);
    assert.deepEqual(done.annotations, { [DECISION]: "allow", [REASON]: `RBAC: allowed by RoleBinding "alice-view/team-a" of ClusterRole "view" to User "alice"` });
    // RequestReceived is written before authorization: no decision yet.
    assert.equal(evs.find((e) => e.stage === "RequestReceived").annotations, undefined);
  });

  test("allowed by a ClusterRoleBinding through a group: the bootstrap discovery binding", async () => {
    const done = (await request("allowed-2", "alice-token", "/apis")).find((e) => e.stage === "ResponseComplete");
    assert.equal(done.annotations[DECISION], "allow");
    assert.equal(done.annotations[REASON], `RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"`);
  });

  test("refused: forbid, with an empty reason when no binding is broken", async () => {
    const done = (await request("refused-1", "alice-token", "/api/v1/namespaces/default/secrets")).find((e) => e.stage === "ResponseComplete");
    assert.equal(done.responseStatus.code, 403);
    assert.deepEqual(done.annotations, { [DECISION]: "forbid", [REASON]: "" });
  });

  test("system:masters: allow with an empty reason, as upstream's privileged group", async () => {
    const done = (await request("admin-1", undefined, "/api/v1/namespaces/default/secrets")).find((e) => e.stage === "ResponseComplete");
    assert.deepEqual(done.annotations, { [DECISION]: "allow", [REASON]: "" });
  });
});
