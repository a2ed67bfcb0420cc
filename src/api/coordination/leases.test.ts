import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import { create, update, NOW } from "../apps/testing.js";
import { coordinationModule } from "./index.js";
import { leases } from "./leases.js";

const lease = (spec: Record<string, unknown> = {}) => ({
  apiVersion: "coordination.orch.io/v1",
  kind: "Lease",
  metadata: { name: "node-1", namespace: "orch-node-lease" },
  spec: { holderIdentity: "node-1", leaseDurationSeconds: 40, renewTime: "2026-01-02T03:04:00.000000Z", ...spec },
});

test("leases: one declaration serves v1 and v1beta1 from one storage", () => {
  const defs = coordinationModule.resources(namingFor());
  assert.equal(defs.length, 1);
  const def = defs[0]!;
  assert.equal(def.group, "coordination.orch.io");
  assert.deepEqual(def.versions, ["v1", "v1beta1"]); // v1 first: preferred and storage version
  assert.equal(def.resource, "leases");
  assert.equal(def.allowCreateOnUpdate, true, "a PUT to a missing lease creates it, as upstream");
  assert.equal(def.namespaced, true);
  assert.equal(def.subresources, undefined);
  assert.equal(leases(namingFor("k8s.io")).group, "coordination.k8s.io");
});

test("leases: validation", () => {
  const def = leases(namingFor());
  assert.deepEqual(create(def, lease()).errors, []);
  const cases: [Record<string, unknown>, string[]][] = [
    [{ leaseDurationSeconds: 0 }, ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]],
    [{ leaseTransitions: -1 }, ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"]],
    [{ strategy: "Newest" }, ['spec.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"']],
    [{ preferredHolder: "node-2" }, ["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"]],
  ];
  for (const [spec, want] of cases) assert.deepEqual(create(def, lease(spec)).errors, want, JSON.stringify(spec));
  assert.deepEqual(create(def, lease({ strategy: "example.com/custom", preferredHolder: "node-2" })).errors, []);
  const { obj } = create(def, lease());
  const next = structuredClone(obj);
  (next["spec"] as Record<string, unknown>)["leaseDurationSeconds"] = -4;
  assert.deepEqual(update(def, next, obj), ["spec.leaseDurationSeconds: Invalid value: -4: must be greater than 0"]);
});

test("leases: table", () => {
  const def = leases(namingFor());
  const { obj } = create(def, lease());
  assert.deepEqual(def.table!.columns.map((c) => c.name), ["Name", "Holder", "Age"]);
  assert.deepEqual(def.table!.cells(obj, NOW), ["node-1", "node-1", "4m5s"]);
  delete (obj["spec"] as Record<string, unknown>)["holderIdentity"];
  assert.equal(def.table!.cells(obj, NOW)[1], "");
});
