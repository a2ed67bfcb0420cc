// The audit policy: parsing (YAML and JSON, both apiVersions, strict errors)
// and matching (each selector, first match wins, stages and managedFields).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { evaluatePolicy, parsePolicy, type PolicyAttributes, type PolicyUser } from "./policy.js";

const GROUPS = ["audit.k8s.io", "audit.orch.io"];

const res = (verb: string, resource: string, o: Partial<PolicyAttributes> = {}): PolicyAttributes => ({
  resourceRequest: true, verb, apiGroup: "", resource, subresource: "", namespace: "default", name: "", path: "/api/v1/x", ...o,
});
const nonRes = (path: string, verb = "get"): PolicyAttributes => ({
  resourceRequest: false, verb, apiGroup: "", resource: "", subresource: "", namespace: "", name: "", path,
});
const ADMIN: PolicyUser = { name: "admin", groups: ["system:masters", "system:authenticated"] };
const ALICE: PolicyUser = { name: "alice", groups: ["dev", "system:authenticated"] };

// One rule per selector, each with its own level, in an order where first-match-wins matters.
const POLICY = parsePolicy(
  `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: [system:kube-proxy]
  - level: RequestResponse
    userGroups: [dev]
    verbs: [delete]
  - level: Metadata
    resources:
      - group: ""
        resources: [secrets]
    omitStages: []
  - level: Request
    resources:
      - group: ""
        resources: [pods/log, "*/status"]
  - level: RequestResponse
    resources:
      - group: apps
        resources: [deployments]
        resourceNames: [web]
  - level: Request
    resources:
      - group: apps
        resources: ["deployments/*"]
  - level: Metadata
    namespaces: [kube-system]
  - level: Request
    nonResourceURLs: [/healthz, "/api*"]
  - level: None
    nonResourceURLs: ["/openapi*"]
  - level: Metadata
    verbs: [watch]
    omitManagedFields: true
  - level: RequestResponse
    users: [alice]
`,
  GROUPS,
);

describe("audit policy matching", () => {
  const cases: [string, PolicyUser, PolicyAttributes, string][] = [
    ["users: a listed user matches", { name: "system:kube-proxy", groups: [] }, res("get", "secrets"), "None"],
    ["userGroups and verbs: both must match", ALICE, res("delete", "configmaps"), "RequestResponse"],
    ["userGroups without the verb falls through (to users: alice, last)", ALICE, res("get", "configmaps"), "RequestResponse"],
    ["first match wins: alice deleting a secret is rule 2, not the secrets rule", ALICE, res("delete", "secrets"), "RequestResponse"],
    ["resources: group and resource", ADMIN, res("get", "secrets"), "Metadata"],
    ["resources: the group must match", ADMIN, res("get", "secrets", { apiGroup: "apps" }), "None"],
    ["resources: pods/log names the subresource", ADMIN, res("get", "pods", { subresource: "log" }), "Request"],
    ["resources: pods alone is not pods/log", ADMIN, res("get", "pods"), "None"],
    ["resources: */status matches any resource's status", ADMIN, res("update", "services", { subresource: "status" }), "Request"],
    ["resourceNames: the named object", ADMIN, res("get", "deployments", { apiGroup: "apps", name: "web" }), "RequestResponse"],
    ["resourceNames: another name falls through (to deployments/*, which covers deployments too, as upstream)", ADMIN, res("get", "deployments", { apiGroup: "apps", name: "api" }), "Request"],
    ["resourceNames: another resource of the group falls through", ADMIN, res("get", "replicasets", { apiGroup: "apps", name: "web" }), "None"],
    ["resources: deployments/* matches a subresource", ADMIN, res("update", "deployments", { apiGroup: "apps", name: "api", subresource: "scale" }), "Request"],
    ["namespaces: a listed namespace", ADMIN, res("get", "configmaps", { namespace: "kube-system" }), "Metadata"],
    ["namespaces: not for a non-resource request", ADMIN, nonRes("/healthz"), "Request"],
    ["nonResourceURLs: a prefix with *", ADMIN, nonRes("/apis/apps/v1"), "Request"],
    ["nonResourceURLs: exact path only without *", ADMIN, nonRes("/healthz/etcd"), "None"],
    ["nonResourceURLs: never a resource request", ADMIN, res("get", "configmaps", { path: "/api/v1/namespaces/default/configmaps" }), "None"],
    ["verbs: watch", ADMIN, res("watch", "configmaps"), "Metadata"],
    ["no rule matches: None", ADMIN, res("get", "configmaps"), "None"],
  ];
  for (const [name, user, attrs, level] of cases) {
    test(name, () => assert.equal(evaluatePolicy(POLICY, user, attrs).level, level));
  }

  test("omitStages: the policy's, unless the rule has its own (even empty)", () => {
    assert.deepEqual(evaluatePolicy(POLICY, ALICE, res("delete", "configmaps")).omitStages, ["RequestReceived"]);
    assert.deepEqual(evaluatePolicy(POLICY, ADMIN, res("get", "secrets")).omitStages, []);
  });

  test("omitManagedFields: the rule's over the policy's", () => {
    assert.equal(evaluatePolicy(POLICY, ADMIN, res("watch", "configmaps")).omitManagedFields, true);
    assert.equal(evaluatePolicy(POLICY, ALICE, res("get", "configmaps")).omitManagedFields, false);
  });
});

describe("audit policy parsing", () => {
  test("JSON and the naming table's apiVersion", () => {
    const p = parsePolicy(JSON.stringify({ apiVersion: "audit.orch.io/v1", kind: "Policy", omitManagedFields: true, rules: [{ level: "Metadata" }] }), GROUPS);
    assert.equal(p.rules.length, 1);
    assert.equal(p.omitManagedFields, true);
    assert.equal(evaluatePolicy(p, ADMIN, nonRes("/version")).level, "Metadata");
  });

  const bad: [string, string, RegExp][] = [
    ["not YAML", "rules: [", /not valid YAML or JSON/],
    ["wrong apiVersion", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: Metadata}]", /apiVersion: Unsupported value: "audit.k8s.io\/v1beta1"/],
    ["wrong kind", "apiVersion: audit.k8s.io/v1\nkind: Pod\nrules: [{level: Metadata}]", /kind: Unsupported value: "Pod"/],
    ["no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []", /0 rules/],
    ["unknown level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]", /rules\[0\]\.level: Unsupported value: "Everything"/],
    ["missing level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]", /rules\[0\]\.level: Required value/],
    ["unknown stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Sometimes]\nrules: [{level: None}]", /omitStages\[0\]: Unsupported value: "Sometimes"/],
    ["unknown field", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, user: [bob]}]", /unknown field "rules\[0\]\.user"/],
    ["resources and nonResourceURLs", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/x], resources: [{group: ''}]}]", /both regular resources and non-resource URLs/],
    ["URL without /", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [healthz]}]", /must begin with a '\/'/],
    ["* inside a URL", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/a*/b']}]", /must be the final character/],
    ["resourceNames without resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: '', resourceNames: [x]}]}]", /requires at least one resource/],
    ["a bad resource form", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{resources: ['pods/log/x']}]}]", /resources\[0\]\.resources\[0\]: Invalid value: "pods\/log\/x"/],
    ["users not a list", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, users: bob}]", /rules\[0\]\.users: Invalid value: must be a list/],
  ];
  for (const [name, text, message] of bad) {
    test(`refuses: ${name}`, () => assert.throws(() => parsePolicy(text, GROUPS), message));
  }
});
