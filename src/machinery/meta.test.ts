import { test } from "node:test";
import assert from "node:assert/strict";
import {
  formatGroupKind,
  formatGroupResource,
  formatGroupVersion,
  formatMicroTimestamp,
  formatTimestamp,
  newUid,
} from "./meta.js";
import { groupVersionKindOf, parseGroupVersion, parseTimestamp } from "./meta-parsing.js";
import { ApiError } from "./errors.js";

test("parseGroupVersion", () => {
  const rows: Array<[string, string, string]> = [
    ["apps/v1", "apps", "v1"],
    ["v1", "", "v1"],
    ["", "", ""],
    ["/", "", ""],
    ["example.orch.io/v1beta1", "example.orch.io", "v1beta1"],
  ];
  for (const [gv, group, version] of rows) {
    assert.deepEqual(parseGroupVersion(gv), { group, version }, gv);
    if (gv !== "/") assert.equal(formatGroupVersion({ group, version }), gv);
  }
  assert.throws(() => parseGroupVersion("a/b/c"), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === "unexpected GroupVersion string: a/b/c");
  assert.deepEqual(groupVersionKindOf({ apiVersion: "apps/v1", kind: "Deployment" }), { group: "apps", version: "v1", kind: "Deployment" });
});

test("group resource and group kind strings", () => {
  assert.equal(formatGroupResource({ group: "", resource: "pods" }), "pods");
  assert.equal(formatGroupResource({ group: "apps", resource: "deployments" }), "deployments.apps");
  assert.equal(formatGroupKind({ group: "", kind: "Pod" }), "Pod");
  assert.equal(formatGroupKind({ group: "apps", kind: "Deployment" }), "Deployment.apps");
});

test("timestamps: RFC 3339 at second precision, micro for MicroTime", () => {
  const d = new Date(Date.UTC(2026, 10, 22, 7, 0, 0, 123));
  assert.equal(formatTimestamp(d), "2026-11-22T07:00:00Z");
  assert.equal(formatMicroTimestamp(d), "2026-11-22T07:00:00.123000Z");
  assert.match(formatTimestamp(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(parseTimestamp("2026-11-22T07:00:00Z").getTime(), Date.UTC(2026, 10, 22, 7));
  assert.equal(parseTimestamp("2026-11-22T09:00:00+02:00").getTime(), Date.UTC(2026, 10, 22, 7));
  assert.throws(() => parseTimestamp("yesterday"), ApiError);
  assert.throws(() => parseTimestamp("2026-11-22 07:00:00"), ApiError);
});

test("newUid is a random RFC 4122 v4 uuid", () => {
  const a = newUid();
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(a, newUid());
});
