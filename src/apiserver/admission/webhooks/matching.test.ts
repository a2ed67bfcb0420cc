import { test } from "node:test";
import assert from "node:assert/strict";
import { ruleMatches } from "./matching.js";
import type { AdmissionAttributes } from "../../../api/admission.js";

function attrs(group: string, resource: string, subresource: string | undefined, namespace: string | undefined, operation: "CREATE" | "UPDATE" | "DELETE" = "UPDATE"): AdmissionAttributes {
  return { operation, resource: { group, resource }, kind: "X", subresource, namespace, name: "n", object: undefined, oldObject: undefined, dryRun: false };
}

test("rules: resources with '*' and subresources, groups, versions, operations and scope as upstream", () => {
  const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({ operations: ["UPDATE"], apiGroups: ["*"], apiVersions: ["*"], resources, ...extra });
  const podStatus = attrs("", "pods", "status", "default");
  const pod = attrs("", "pods", undefined, "default");
  assert.equal(ruleMatches(rule(["pods"]), pod, "v1"), true);
  assert.equal(ruleMatches(rule(["pods"]), podStatus, "v1"), false, "a resource does not match its subresources");
  assert.equal(ruleMatches(rule(["pods/status"]), podStatus, "v1"), true);
  assert.equal(ruleMatches(rule(["pods/*"]), podStatus, "v1"), true);
  assert.equal(ruleMatches(rule(["pods/*"]), pod, "v1"), true, "upstream: a '*' subresource also matches no subresource");
  assert.equal(ruleMatches(rule(["*"]), podStatus, "v1"), false);
  assert.equal(ruleMatches(rule(["*/status"]), podStatus, "v1"), true);
  assert.equal(ruleMatches(rule(["*/*"]), pod, "v1"), true);
  assert.equal(ruleMatches(rule(["*/scale"]), attrs("apps", "deployments", "scale", "default"), "v1"), true);
  assert.equal(ruleMatches(rule(["pods"], { apiGroups: ["apps"] }), pod, "v1"), false);
  assert.equal(ruleMatches(rule(["pods"], { apiVersions: ["v2"] }), pod, "v1"), false);
  assert.equal(ruleMatches(rule(["pods"], { operations: ["CREATE", "DELETE"] }), pod, "v1"), false);
  assert.equal(ruleMatches(rule(["pods"], { operations: ["*"] }), pod, "v1"), true);
  assert.equal(ruleMatches(rule(["pods"], { scope: "Namespaced" }), pod, "v1"), true);
  assert.equal(ruleMatches(rule(["pods"], { scope: "Cluster" }), pod, "v1"), false);
  assert.equal(ruleMatches(rule(["nodes"], { scope: "Cluster" }), attrs("", "nodes", undefined, undefined), "v1"), true);
  // A Namespace is cluster-scoped for the rules, as upstream.
  assert.equal(ruleMatches(rule(["namespaces"], { scope: "Cluster" }), attrs("", "namespaces", undefined, "ns1"), "v1"), true);
  assert.equal(ruleMatches(rule(["namespaces"], { scope: "Namespaced" }), attrs("", "namespaces", undefined, "ns1"), "v1"), false);
});
