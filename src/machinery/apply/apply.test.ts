import { test } from "node:test";
import assert from "node:assert/strict";
import { SchemaRegistry } from "../schema.js";
import { registerCoreSchemas } from "../../api/core/schemas.js";
import { APPS_TYPES } from "../../api/apps/schemas.js";
import { isApiError, type ApiError } from "../errors.js";
import type { ApiObject } from "../meta.js";
import { apply, fieldSetOf, updateManagedFields, type TypeContext } from "./index.js";

const registry = new SchemaRegistry();
registerCoreSchemas(registry);
registry.add(...APPS_TYPES);
const DEPLOYMENT: TypeContext = { registry, type: "io.k8s.api.apps.v1.Deployment" };
const CONFIGMAP: TypeContext = { registry, type: "io.k8s.api.core.v1.ConfigMap" };

const T0 = new Date("2026-03-01T10:00:00.250Z");
const T1 = new Date("2026-03-01T10:05:00Z");
const T2 = new Date("2026-03-01T10:10:00Z");

/** The Deployment of the Kubernetes docs' examples (nginx, 3 replicas, port 80). */
function nginx(overrides: { replicas?: number; image?: string; labels?: Record<string, string> } = {}): ApiObject {
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: "nginx" } },
    template: {
      metadata: { labels: { app: "nginx" } },
      spec: { containers: [{ name: "nginx", image: overrides.image ?? "nginx:1.14.2", ports: [{ containerPort: 80 }] }] },
    },
  };
  if (overrides.replicas !== undefined) spec["replicas"] = overrides.replicas;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "nginx-deployment", labels: overrides.labels ?? { app: "nginx" } },
    spec,
  };
}

/** What the store adds on create: the fields no manager may own. */
function stored(obj: ApiObject, rv = "1"): ApiObject {
  return { ...obj, metadata: { ...obj.metadata, uid: "7a3c7c4e-0000-4000-8000-000000000001", resourceVersion: rv, generation: 1, creationTimestamp: "2026-03-01T10:00:00Z" } };
}

function applyAs(manager: string, live: ApiObject | undefined, applied: ApiObject, now = T1, force = false) {
  return apply({ live, applied, manager, force, schema: DEPLOYMENT, now, apiVersion: "apps/v1" });
}

function update(manager: string, live: ApiObject, change: (o: ApiObject) => void, now = T1) {
  const updated = structuredClone(live);
  change(updated);
  return updateManagedFields({ live, updated, manager, operation: "Update", now, apiVersion: "apps/v1", schema: DEPLOYMENT });
}

function conflictOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(isApiError(err, "Conflict"), `expected a Conflict, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a conflict");
}

const spec = (o: ApiObject) => o["spec"] as Record<string, any>;

// The exact bytes upstream stores for this apply: elements sorted, "." after the children,
// list items keyed by their key fields (protocol from its schema default), server-set metadata left out.
const NGINX_FIELDS_V1 =
  '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},' +
  '"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":' +
  '{"f:containerPort":{},".":{}}},".":{}}}}}}}';

test("apply creates: the object is the configuration, the applier owns what it set", () => {
  const applied = nginx({ replicas: 3 });
  const { object, managedFields } = applyAs("kubectl", undefined, applied, T0);
  assert.deepEqual(managedFields, [
    { manager: "kubectl", operation: "Apply", apiVersion: "apps/v1", time: "2026-03-01T10:00:00Z", fieldsType: "FieldsV1", fieldsV1: JSON.parse(NGINX_FIELDS_V1) },
  ]);
  assert.equal(JSON.stringify(managedFields[0]!.fieldsV1), NGINX_FIELDS_V1);
  assert.equal(JSON.stringify(Object.keys(managedFields[0]!)), '["manager","operation","apiVersion","time","fieldsType","fieldsV1"]');
  assert.deepEqual(object.metadata.managedFields, managedFields);
  assert.deepEqual(spec(object), spec(applied));
  assert.equal(applied.metadata.managedFields, undefined, "input not mutated");
});

test("applying twice with changes updates values and keeps one entry", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  const second = applyAs("kubectl", stored(first.object), nginx({ replicas: 5, image: "nginx:1.16.1" }), T1);
  assert.equal(spec(second.object)["replicas"], 5);
  assert.equal(spec(second.object)["template"].spec.containers[0].image, "nginx:1.16.1");
  assert.equal(second.managedFields.length, 1);
  assert.equal(second.managedFields[0]!.time, "2026-03-01T10:05:00Z");
  assert.equal(second.object.metadata.uid, "7a3c7c4e-0000-4000-8000-000000000001", "server-set metadata survives");
  // A no-op apply keeps the time.
  const third = applyAs("kubectl", stored(second.object, "2"), nginx({ replicas: 5, image: "nginx:1.16.1" }), T2);
  assert.equal(third.managedFields[0]!.time, "2026-03-01T10:05:00Z");
});

test("a field left out of the next apply is removed when nobody else owns it", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3, labels: { app: "nginx", tier: "web" } }), T0);
  const second = applyAs("kubectl", stored(first.object), nginx({ labels: { app: "nginx" } }), T1);
  assert.equal(spec(second.object)["replicas"], undefined);
  assert.deepEqual(second.object.metadata.labels, { app: "nginx" });
  assert.ok(!JSON.stringify(second.managedFields).includes("f:replicas"));
  // Dropping a whole list item removes it.
  const two = nginx({ replicas: 1 });
  spec(two)["template"].spec.containers.push({ name: "sidecar", image: "busybox" });
  const a = applyAs("kubectl", undefined, two, T0);
  const b = applyAs("kubectl", stored(a.object), nginx({ replicas: 1 }), T1);
  assert.deepEqual(spec(b.object)["template"].spec.containers.map((c: { name: string }) => c.name), ["nginx"]);
});

test("a field left out stays when another manager owns it too", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  // A second applier states the same value: shared ownership, no conflict.
  const shared = applyAs("other", stored(first.object), { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx-deployment" }, spec: { replicas: 3 } }, T1);
  assert.equal(shared.managedFields.length, 2);
  const dropped = applyAs("kubectl", stored(shared.object, "2"), nginx(), T2);
  assert.equal(spec(dropped.object)["replicas"], 3);
  const owners = dropped.managedFields.filter((e) => JSON.stringify(e.fieldsV1).includes("f:replicas")).map((e) => e.manager);
  assert.deepEqual(owners, ["other"]);
});

test("two managers with disjoint fields coexist", () => {
  const first = applyAs("kubectl", undefined, nginx(), T0);
  const second = applyAs("hpa", stored(first.object), { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx-deployment" }, spec: { replicas: 4 } }, T1);
  assert.equal(spec(second.object)["replicas"], 4);
  assert.deepEqual(second.managedFields.map((e) => e.manager), ["kubectl", "hpa"]); // Apply entries by time
  assert.deepEqual(second.managedFields[1]!.fieldsV1, { "f:spec": { "f:replicas": {} } });
  // kubectl applying again without replicas leaves hpa's value alone.
  const third = applyAs("kubectl", stored(second.object, "2"), nginx({ image: "nginx:1.16.1" }), T2);
  assert.equal(spec(third.object)["replicas"], 4);
});

test("a conflicting apply is a 409 with one cause per field in upstream's format", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  const scaled = update("kubectl-client-side-apply", stored(first.object), (o) => {
    spec(o)["replicas"] = 2;
    spec(o)["template"].spec.containers[0].image = "nginx:1.15";
  });
  const err = conflictOf(() => applyAs("kubectl", stored(scaled.object, "2"), nginx({ replicas: 5, image: "nginx:1.16.1" }), T2));
  assert.equal(err.code, 409);
  assert.equal(
    err.message,
    'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
  );
  assert.deepEqual(err.status.details?.causes, [
    { reason: "FieldManagerConflict", message: 'conflict with "kubectl-client-side-apply" using apps/v1', field: ".spec.replicas" },
    { reason: "FieldManagerConflict", message: 'conflict with "kubectl-client-side-apply" using apps/v1', field: '.spec.template.spec.containers[name="nginx"].image' },
  ]);
  // One conflict with an applier: the single-conflict wording, no apiVersion.
  const other = applyAs("argo", stored(first.object), { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx-deployment" }, spec: { replicas: 7 } }, T1, true);
  const one = conflictOf(() => applyAs("kubectl", stored(other.object, "2"), nginx({ replicas: 1 }), T2));
  assert.equal(one.message, 'Apply failed with 1 conflict: conflict with "argo": .spec.replicas');
});

test("force takes ownership from the other manager", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  const scaled = update("kubectl-scale", stored(first.object), (o) => void (spec(o)["replicas"] = 2));
  const forced = applyAs("kubectl", stored(scaled.object, "2"), nginx({ replicas: 5 }), T2, true);
  assert.equal(spec(forced.object)["replicas"], 5);
  assert.deepEqual(forced.managedFields.map((e) => e.manager), ["kubectl"], "kubectl-scale's only field moved, its entry is gone");
  assert.ok(JSON.stringify(forced.managedFields[0]!.fieldsV1).includes("f:replicas"));
});

test("an Update after an Apply moves ownership of the changed field", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  const scaled = update("kubectl-scale", stored(first.object), (o) => void (spec(o)["replicas"] = 6), T1);
  assert.deepEqual(
    scaled.managedFields.map((e) => [e.manager, e.operation, e.time]),
    [
      ["kubectl", "Apply", "2026-03-01T10:00:00Z"],
      ["kubectl-scale", "Update", "2026-03-01T10:05:00Z"],
    ],
  );
  assert.deepEqual(scaled.managedFields[1]!.fieldsV1, { "f:spec": { "f:replicas": {} } });
  assert.ok(!JSON.stringify(scaled.managedFields[0]!.fieldsV1).includes("f:replicas"));
  // An update that changes nothing adds no entry; metadata churn (resourceVersion) is never owned.
  const noop = update("kubectl-edit", stored(scaled.object, "2"), (o) => void (o.metadata.resourceVersion = "3"), T2);
  assert.deepEqual(noop.managedFields.map((e) => e.manager), ["kubectl", "kubectl-scale"]);
  // A later update by the same manager merges into its entry and restamps it.
  const again = update("kubectl-scale", stored(scaled.object, "2"), (o) => void (o.metadata.labels = { app: "nginx", scaled: "yes" }), T2);
  assert.equal(again.managedFields.length, 2);
  assert.deepEqual(again.managedFields[1]!.fieldsV1, { "f:metadata": { "f:labels": { "f:scaled": {} } }, "f:spec": { "f:replicas": {} } });
  assert.equal(again.managedFields[1]!.time, "2026-03-01T10:10:00Z");
});

test("an Update on a subresource records it; removal strips other owners", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  const live = stored(first.object);
  const status = updateManagedFields({
    live,
    updated: { ...structuredClone(live), status: { replicas: 3 } },
    manager: "kube-controller-manager",
    operation: "Update",
    subresource: "status",
    now: T1,
    apiVersion: "apps/v1",
    schema: DEPLOYMENT,
  });
  const entry = status.managedFields[1]!;
  assert.deepEqual(Object.keys(entry), ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"]);
  assert.equal(entry.subresource, "status");
  assert.deepEqual(entry.fieldsV1, { "f:status": { "f:replicas": {} } });
  // Someone deletes the labels with a PUT: kubectl no longer owns them.
  const put = update("kubectl-edit", stored(status.object, "2"), (o) => void delete o.metadata.labels);
  assert.equal((put.managedFields[0]!.fieldsV1 as Record<string, unknown>)["f:metadata"], undefined);
  assert.deepEqual(put.managedFields.map((e) => e.manager), ["kubectl", "kube-controller-manager"], "a removal alone takes nothing");
});

test("managedFields: [{}] in a write clears them; managedFields in an apply body is a 400", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 3 }), T0);
  const cleared = update("kubectl-edit", stored(first.object), (o) => void (o.metadata.managedFields = [{}]));
  assert.deepEqual(cleared.managedFields, []);
  assert.equal(cleared.object.metadata.managedFields, undefined);
  const withMf = { ...nginx(), metadata: { name: "x", managedFields: [] } };
  assert.throws(() => applyAs("kubectl", undefined, withMf), (e: unknown) => isApiError(e, "BadRequest") && e.message === "metadata.managedFields must be nil");
  assert.throws(
    () => apply({ live: undefined, applied: { ...nginx(), apiVersion: "apps/v1beta1" }, manager: "kubectl", schema: DEPLOYMENT, now: T0, apiVersion: "apps/v1" }),
    (e: unknown) => isApiError(e, "BadRequest") && e.message === "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1",
  );
});

test("fieldSetOf follows list types: map lists by key, sets by value, atomic lists and selectors whole", () => {
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "test-cm", namespace: "default", labels: { "test-label": "test" }, finalizers: ["a/b"] }, data: { key: "some value" } };
  // The docs' ConfigMap example, plus a finalizer (a set list).
  assert.deepEqual(fieldSetOf(cm, CONFIGMAP).toJSON(), {
    "f:apiVersion": {},
    "f:data": { "f:key": {} },
    "f:kind": {},
    "f:metadata": { "f:finalizers": { 'v:"a/b"': {} }, "f:labels": { "f:test-label": {} }, "f:name": {}, "f:namespace": {} },
  });
  const set = fieldSetOf({ spec: { template: { spec: { containers: [{ name: "c", args: ["-v", "2"], env: [{ name: "A", value: "1" }] }] } } } }, DEPLOYMENT);
  assert.equal(
    set.toString(),
    '{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\\"name\\":\\"c\\"}":{"f:args":{},"f:env":{"k:{\\"name\\":\\"A\\"}":{"f:name":{},"f:value":{},".":{}}},"f:name":{},".":{}}}}}}}',
  );
});

test("applying the same configuration from the ConfigMap docs example gives the docs' fieldsV1", () => {
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "test-cm", namespace: "default", labels: { "test-label": "test" } }, data: { key: "some value" } };
  const { managedFields } = apply({ live: undefined, applied: cm, manager: "kubectl", schema: CONFIGMAP, now: T0, apiVersion: "v1" });
  assert.deepEqual(managedFields[0]!.fieldsV1, { "f:data": { "f:key": {} }, "f:metadata": { "f:labels": { "f:test-label": {} } } });
});

test("map lists merge by key: other managers' items survive and keep their place", () => {
  const first = applyAs("kubectl", undefined, nginx({ replicas: 1 }), T0);
  const injected = update("injector", stored(first.object), (o) => {
    spec(o)["template"].spec.containers.unshift({ name: "proxy", image: "envoy" });
  });
  const again = applyAs("kubectl", stored(injected.object, "2"), nginx({ replicas: 1, image: "nginx:1.16.1" }), T2);
  assert.deepEqual(
    spec(again.object)["template"].spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`),
    ["proxy=envoy", "nginx=nginx:1.16.1"],
  );
});

test("past ten Update managers the oldest merge into ancient-changes", () => {
  let obj = stored(applyAs("kubectl", undefined, nginx({ replicas: 1 }), T0).object);
  for (let i = 0; i < 11; i++) {
    obj = stored(update(`m${i}`, obj, (o) => void (o.metadata.annotations = { ...o.metadata.annotations, [`k${i}`]: "v" }), new Date(T0.getTime() + (i + 1) * 1000)).object);
  }
  const names = obj.metadata.managedFields!.map((e) => e.manager);
  assert.equal(names.filter((n) => n !== "kubectl").length, 10);
  assert.ok(names.includes("ancient-changes"));
  assert.ok(!names.includes("m0") && !names.includes("m1"));
});

function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

test("set lists merge by value and inputs are never mutated", () => {
  const withFinalizers = (...fs: string[]) => ({ ...nginx({ replicas: 1 }), metadata: { name: "nginx-deployment", finalizers: fs } });
  const first = applyAs("kubectl", undefined, deepFreeze(withFinalizers("a/x", "a/y")), T0);
  const live = deepFreeze(stored(first.object));
  const other = update("controller", live, (o) => void o.metadata.finalizers!.push("c/z"));
  const frozen = deepFreeze(stored(other.object, "2"));
  const again = applyAs("kubectl", frozen, deepFreeze(withFinalizers("a/x")), T2);
  assert.deepEqual(again.object.metadata.finalizers, ["a/x", "c/z"]);
  assert.deepEqual((again.managedFields[0]!.fieldsV1 as Record<string, unknown>)["f:metadata"], { "f:finalizers": { 'v:"a/x"': {} } });
});
