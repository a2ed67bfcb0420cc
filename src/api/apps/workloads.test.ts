import { test } from "node:test";
import assert from "node:assert/strict";
import { findSubresource, scaleAccess } from "../subresources/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { replicasets } from "./replicasets.js";
import { daemonsets } from "./daemonsets.js";
import { statefulsets } from "./statefulsets.js";
import { controllerrevisions } from "./controllerrevisions.js";
import { appsModule } from "./index.js";
import { create, update, template, NOW } from "./testing.js";
import { semanticEqual } from "./workload.js";

const obj = (kind: string, spec: Record<string, unknown>, name = "web") => ({
  apiVersion: "apps/v1",
  kind,
  metadata: { name, namespace: "default" },
  spec: { selector: { matchLabels: { app: "web" } }, template: template({ app: "web" }), ...spec },
});
const specOf = (o: ApiObject) => o["spec"] as Record<string, unknown>;

test("apps: module lists its five resources with upstream's names", () => {
  const defs = appsModule.resources({} as never);
  assert.deepEqual(
    defs.map((d) => [d.resource, d.kind, d.shortNames ?? [], d.categories ?? [], !!findSubresource(d, "status"), !!findSubresource(d, "scale")]),
    [
      ["deployments", "Deployment", ["deploy"], ["all"], true, true],
      ["replicasets", "ReplicaSet", ["rs"], ["all"], true, true],
      ["daemonsets", "DaemonSet", ["ds"], ["all"], true, false],
      ["statefulsets", "StatefulSet", ["sts"], ["all"], true, true],
      ["controllerrevisions", "ControllerRevision", [], [], false, false],
    ],
  );
  assert.equal(statefulsets.nameRule, "label");
});

test("replicasets: defaults, validation, immutable selector, table, scale", () => {
  const { obj: rs, errors } = create(replicasets, obj("ReplicaSet", {}));
  assert.deepEqual(errors, []);
  assert.equal(specOf(rs)["replicas"], 1);
  assert.deepEqual(rs["status"], { replicas: 0 });
  assert.deepEqual(create(replicasets, obj("ReplicaSet", { replicas: -3 })).errors, ["spec.replicas: Invalid value: -3: must be greater than or equal to 0"]);
  assert.deepEqual(create(replicasets, obj("ReplicaSet", { selector: {} })).errors, [
    "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
  ]);
  const moved = structuredClone(rs);
  specOf(moved)["selector"] = { matchLabels: { app: "web" }, matchExpressions: [{ key: "x", operator: "DoesNotExist" }] };
  assert.deepEqual(update(replicasets, moved, rs), [
    'spec.selector: Invalid value: {"matchExpressions":[{"key":"x","operator":"DoesNotExist"}],"matchLabels":{"app":"web"}}: field is immutable',
  ]);
  rs["status"] = { replicas: 2, readyReplicas: 1 };
  assert.deepEqual(replicasets.table!.columns.map((c) => c.name), ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"]);
  assert.deepEqual(replicasets.table!.cells(rs, NOW), ["web", 1, 2, 1, "4m5s", "web", "nginx:1.27", "app=web"]);
  assert.equal(scaleAccess(replicasets)!.statusReplicas(rs), 2);
});

test("daemonsets: defaults, validation and table", () => {
  const { obj: ds, errors } = create(daemonsets, obj("DaemonSet", {}));
  assert.deepEqual(errors, []);
  assert.deepEqual(specOf(ds)["updateStrategy"], { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.equal(specOf(ds)["revisionHistoryLimit"], 10);
  assert.deepEqual(ds["status"], { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  const cases: [Record<string, unknown>, string[]][] = [
    [{ updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }, ["spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"]],
    [{ updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }, ["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"]],
    [{ updateStrategy: { type: "Sometimes" } }, ['spec.updateStrategy.type: Unsupported value: "Sometimes": supported values: "RollingUpdate", "OnDelete"']],
    [{ selector: { matchLabels: { app: "db" } } }, ['spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']],
    [{ selector: {} }, ["spec.selector: Invalid value: {}: empty selector is invalid for daemonset"]],
    [{ template: template({ app: "web" }, { activeDeadlineSeconds: 9 }) }, ["spec.template.spec.activeDeadlineSeconds: Invalid value: 9: activeDeadlineSeconds in DaemonSet is not Supported"]],
  ];
  for (const [spec, want] of cases) assert.deepEqual(create(daemonsets, obj("DaemonSet", spec)).errors, want, JSON.stringify(spec));
  const withNodes = create(daemonsets, obj("DaemonSet", { template: template({ app: "web" }, { nodeSelector: { zone: "b", disk: "ssd" } }) })).obj;
  withNodes["status"] = { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 };
  assert.deepEqual(daemonsets.table!.columns.map((c) => c.name), [
    "Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector",
  ]);
  assert.deepEqual(daemonsets.table!.cells(withNodes, NOW), ["web", 3, 3, 2, 3, 2, "disk=ssd,zone=b", "4m5s", "web", "nginx:1.27", "app=web"]);
  assert.equal(daemonsets.table!.cells(ds, NOW)[6], "<none>");
});

test("statefulsets: defaults", () => {
  const { obj: sts, errors } = create(statefulsets, obj("StatefulSet", { serviceName: "web" }));
  assert.deepEqual(errors, []);
  const spec = specOf(sts);
  assert.equal(spec["replicas"], 1);
  assert.equal(spec["podManagementPolicy"], "OrderedReady");
  assert.deepEqual(spec["updateStrategy"], { type: "RollingUpdate", rollingUpdate: { partition: 0 } });
  assert.deepEqual(spec["persistentVolumeClaimRetentionPolicy"], { whenDeleted: "Retain", whenScaled: "Retain" });
  assert.equal(spec["revisionHistoryLimit"], 10);
  assert.deepEqual(sts["status"], { replicas: 0, availableReplicas: 0 });
  const claims = create(statefulsets, obj("StatefulSet", { volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }] })).obj;
  assert.deepEqual((specOf(claims)["volumeClaimTemplates"] as { status: unknown }[])[0]!.status, { phase: "Pending" });
  // OnDelete keeps no rollingUpdate block.
  const onDelete = create(statefulsets, obj("StatefulSet", { updateStrategy: { type: "OnDelete" } })).obj;
  assert.deepEqual(specOf(onDelete)["updateStrategy"], { type: "OnDelete" });
});

test("statefulsets: validation messages", () => {
  const cases: [Record<string, unknown>, string[]][] = [
    [{ podManagementPolicy: "Random" }, ["spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"]],
    [{ updateStrategy: { type: "OnDelete", rollingUpdate: { partition: 1 } } }, [
      "spec.updateStrategy.rollingUpdate: Invalid value: {\"partition\":1}: only allowed for updateStrategy 'RollingUpdate'",
    ]],
    [{ updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: -1 } } }, ["spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"]],
    [{ updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0 } } }, ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0"]],
    [{ persistentVolumeClaimRetentionPolicy: { whenDeleted: "Keep" } }, ['spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"']],
    [{ ordinals: { start: -1 } }, ["spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0"]],
    [{ selector: {} }, ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"]],
    [{ template: template({ app: "web" }, { restartPolicy: "OnFailure" }) }, ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"']],
  ];
  for (const [spec, want] of cases) assert.deepEqual(create(statefulsets, obj("StatefulSet", spec)).errors, want, JSON.stringify(spec));
});

test("statefulsets: only some spec fields may change", () => {
  const { obj: old } = create(statefulsets, obj("StatefulSet", { serviceName: "web", volumeClaimTemplates: [{ metadata: { name: "data" } }] }));
  const ok = structuredClone(old);
  Object.assign(specOf(ok), { replicas: 3, minReadySeconds: 5, revisionHistoryLimit: 2, ordinals: { start: 1 }, template: template({ app: "web" }, { hostname: "x" }) });
  assert.deepEqual(update(statefulsets, ok, old), []);
  const bad = structuredClone(old);
  specOf(bad)["volumeClaimTemplates"] = [{ metadata: { name: "data2" } }];
  assert.deepEqual(update(statefulsets, bad, old), [
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
  ]);
  const selector = structuredClone(old);
  specOf(selector)["selector"] = { matchLabels: { app: "web", v: "2" } };
  specOf(selector)["template"] = template({ app: "web", v: "2" });
  const errs = update(statefulsets, selector, old);
  assert.ok(errs.includes('spec.selector: Invalid value: {"matchLabels":{"app":"web","v":"2"}}: field is immutable'), errs.join("\n"));
});

test("statefulsets: table and scale", () => {
  const { obj: sts } = create(statefulsets, obj("StatefulSet", { replicas: 3 }));
  sts["status"] = { replicas: 3, readyReplicas: 1 };
  assert.deepEqual(statefulsets.table!.columns.map((c) => [c.name, c.priority]), [["Name", 0], ["Ready", 0], ["Age", 0], ["Containers", 1], ["Images", 1]]);
  assert.deepEqual(statefulsets.table!.cells(sts, NOW), ["web", "1/3", "4m5s", "web", "nginx:1.27"]);
  assert.equal(scaleAccess(statefulsets)!.selector(sts), "app=web");
});

test("controllerrevisions: data required and immutable; controller column", () => {
  const base = {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: {
      name: "web-5d8f",
      namespace: "default",
      ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "web", uid: "u", controller: true }],
    },
    data: { spec: { template: {} } },
    revision: 2,
  };
  const { obj: cr, errors } = create(controllerrevisions, base);
  assert.deepEqual(errors, []);
  assert.deepEqual(create(controllerrevisions, { ...base, data: undefined, revision: -1 }).errors, [
    "data: Required value: data is mandatory",
    "revision: Invalid value: -1: must be greater than or equal to 0",
  ]);
  const changed = structuredClone(cr);
  changed["data"] = { spec: { template: { metadata: {} } } };
  assert.deepEqual(update(controllerrevisions, changed, cr), []); // empty maps compare equal, as upstream's semantic equality
  changed["data"] = { spec: { replicas: 2 } };
  assert.deepEqual(update(controllerrevisions, changed, cr), ['data: Invalid value: {"spec":{"replicas":2}}: field is immutable']);
  assert.deepEqual(controllerrevisions.table!.columns.map((c) => c.name), ["Name", "Controller", "Revision", "Age"]);
  assert.deepEqual(controllerrevisions.table!.cells(cr, NOW), ["web-5d8f", "statefulset.apps/web", 2, "4m5s"]);
  const orphan = structuredClone(cr);
  orphan.metadata.ownerReferences = [];
  assert.equal(controllerrevisions.table!.cells(orphan, NOW)[1], "<none>");
});

test("semantic equality ignores key order and treats null, absent and empty alike", () => {
  assert.ok(semanticEqual({ a: 1, b: [1] }, { b: [1], a: 1 }));
  assert.ok(semanticEqual({ a: null, m: {} }, {}));
  assert.ok(!semanticEqual({ a: 1 }, { a: 2 }));
  assert.ok(!semanticEqual([1, 2], [2, 1]));
});
