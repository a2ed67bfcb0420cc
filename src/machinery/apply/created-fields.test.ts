// The create fast path of updateManagedFields (createdFieldsV1, one walk)
// against the general path it replaces on creates (compare with the empty
// object, union, exclusion, difference, toJSON): the same fieldsV1 bytes for
// hand-picked objects and for random objects generated from the real schemas.

import { test } from "node:test";
import assert from "node:assert/strict";
import { SchemaRegistry, type Schema } from "../schema.js";
import { registerCoreSchemas } from "../../api/core/schemas.js";
import { APPS_TYPES } from "../../api/apps/schemas.js";
import type { ApiObject } from "../meta.js";
import { FieldSet, fieldElement, keyElement } from "./field-set.js";
import { STRIPPED_FIELDS, emptyLike, excludePrefixes, updateManagedFields } from "./managed-fields.js";
import { compare, createdFieldsV1, type TypeContext } from "./typed.js";
import { seededRandom } from "../codec/protobuf/testing.js";

const registry = new SchemaRegistry();
registerCoreSchemas(registry);
registry.add(...APPS_TYPES);
const POD: TypeContext = { registry, type: "io.k8s.api.core.v1.Pod" };
const DEPLOYMENT: TypeContext = { registry, type: "io.k8s.api.apps.v1.Deployment" };
const STATUS = FieldSet.of([fieldElement("status")]);
const SPEC = FieldSet.of([fieldElement("spec")]);
const DEEP = FieldSet.of([fieldElement("spec"), fieldElement("containers"), keyElement([["name", "main"]]), fieldElement("image")], [fieldElement("metadata"), fieldElement("labels")]);

/** What the general path computes for a create: the reference. */
function reference(obj: ApiObject, ctx: TypeContext, reset: FieldSet | undefined): string {
  const c = compare(emptyLike(obj, ctx), obj, ctx);
  return JSON.stringify(excludePrefixes(c.modified.union(c.added), reset).difference(STRIPPED_FIELDS).toJSON());
}

function fast(obj: ApiObject, ctx: TypeContext, reset: FieldSet | undefined): string | undefined {
  const out = createdFieldsV1(obj as unknown as Record<string, unknown>, emptyLike(obj, ctx) as unknown as Record<string, unknown>, ctx, reset, STRIPPED_FIELDS);
  return out === undefined ? undefined : JSON.stringify(out);
}

function assertSame(obj: ApiObject, ctx: TypeContext, label: string): void {
  for (const reset of [undefined, STATUS, SPEC, DEEP]) {
    const want = reference(obj, ctx, reset);
    const got = fast(obj, ctx, reset);
    if (got === undefined) continue; // collapsed list items: the general path runs
    assert.equal(got, want, `${label}, reset ${reset?.toString() ?? "none"}: ${JSON.stringify(obj)}`);
  }
}

/** A defaulted pod like bench/api's, as the store holds it before the field manager runs. */
function benchPod(): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "c-1", namespace: "creates", uid: "7a3c7c4e-0000-4000-8000-000000000001", creationTimestamp: "2026-03-01T10:00:00Z",
      labels: { app: "bench", shard: "1" }, annotations: { note: "x".repeat(30) },
    },
    spec: {
      containers: [
        {
          name: "main", image: "registry.local/bench:1.0", command: ["/bin/sh", "-c", "sleep 3600"],
          env: Array.from({ length: 3 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${k}` })),
          ports: [{ containerPort: 8080, name: "http", protocol: "TCP" }],
          resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "256Mi" } },
          terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", imagePullPolicy: "IfNotPresent",
        },
      ],
      restartPolicy: "Always", terminationGracePeriodSeconds: 30, dnsPolicy: "ClusterFirst", securityContext: {}, schedulerName: "default-scheduler",
      tolerations: [{ key: "a", operator: "Exists" }, { key: "a", operator: "Exists" }],
      enableServiceLinks: true, preemptionPolicy: "PreemptLowerPriority", priority: 0,
    },
    status: { phase: "Pending", qosClass: "Burstable" },
  } as ApiObject;
}

test("a create's fieldsV1 from one walk is the general path's, byte for byte (hand-picked objects)", () => {
  assertSame(benchPod(), POD, "bench pod");
  const odd: ApiObject[] = [
    { apiVersion: "v1", kind: "Pod", metadata: {} } as ApiObject,
    { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: null, status: {} } as unknown as ApiObject,
    { apiVersion: "v1", kind: "Pod", metadata: { name: "a", labels: {} }, spec: "text", status: [] } as unknown as ApiObject,
    { apiVersion: "v1", kind: "Pod", metadata: { name: "a", finalizers: ["x", "x", "y"], ownerReferences: [] }, spec: { containers: [{ name: "m", env: null }], unknownField: { a: 1 } } } as unknown as ApiObject,
    { apiVersion: "v1", kind: "Pod", metadata: { name: "a", labels: { z: "1", a: "2", "\u00e9": "3", "\ud83d\ude00": "4", "\uffff": "5" } }, spec: {} } as unknown as ApiObject,
  ];
  for (const [i, o] of odd.entries()) assertSame(o, POD, `odd ${i}`);
  // The fields the empty object has as {}: each kind of value there, one after another (one memo key must not answer for another).
  for (const v of [{}, [], null, "s", 0, false, { unknown: undefined }, {}, [1], { containers: [] }, []]) {
    for (const name of ["spec", "status", "metadata"]) {
      const o = { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, [name]: v } as unknown as ApiObject;
      if (name === "metadata" && (typeof v !== "object" || v === null || Array.isArray(v))) continue; // checked before the field manager runs
      assertSame(o, POD, `${name}: ${JSON.stringify(v)}`);
    }
  }
  assertSame(
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", labels: { app: "x" } }, spec: { replicas: 3, selector: { matchLabels: { app: "x" } }, template: { metadata: { labels: { app: "x" } }, spec: { containers: [{ name: "n", image: "i", ports: [{ containerPort: 80 }, { containerPort: 80, protocol: "UDP" }] }] } } } } as unknown as ApiObject,
    DEPLOYMENT,
    "deployment",
  );
});

test("list items that collapse into one element leave the create to the general path", () => {
  // A set list (finalizers) holding objects whose keys differ only in order: two items, one element.
  const obj = { apiVersion: "v1", kind: "Pod", metadata: { name: "a", finalizers: [{ a: 1, b: 2 }, { b: 2, a: 1 }] } } as unknown as ApiObject;
  assert.equal(fast(obj, POD, undefined), undefined);
  const { managedFields } = updateManagedFields({ live: undefined, updated: obj, manager: "m", operation: "Update", now: new Date(), apiVersion: "v1", schema: POD });
  assert.equal(JSON.stringify(managedFields[0]!.fieldsV1), reference(obj, POD, undefined));
  assert.equal(JSON.stringify(managedFields[0]!.fieldsV1), '{"f:metadata":{"f:finalizers":{"v:{\\"a\\":1,\\"b\\":2}":{},".":{}}}}');
});

test("updateManagedFields on create records the fast path's entry in upstream's shape", () => {
  const obj = benchPod();
  const { managedFields } = updateManagedFields({ live: undefined, updated: obj, manager: "kubectl-create", operation: "Update", now: new Date("2026-03-01T10:00:00.250Z"), apiVersion: "v1", schema: POD, resetFields: STATUS });
  assert.equal(managedFields.length, 1);
  assert.deepEqual(Object.keys(managedFields[0]!), ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]);
  assert.equal(managedFields[0]!.time, "2026-03-01T10:00:00Z");
  assert.equal(JSON.stringify(managedFields[0]!.fieldsV1), reference(obj, POD, STATUS));
  assert.match(JSON.stringify(managedFields[0]!.fieldsV1), /^\{"f:metadata":\{"f:annotations":\{"f:note":\{\},"\.":\{\}\},"f:labels":/);
  // Nothing left to own: no entry at all.
  const bare = updateManagedFields({ live: undefined, updated: { apiVersion: "v1", kind: "Pod", metadata: { name: "a" } } as ApiObject, manager: "m", operation: "Update", now: new Date(), apiVersion: "v1", schema: POD });
  assert.deepEqual(bare.managedFields, []);
  assert.equal(bare.object.metadata.managedFields, undefined);
});

// ---- random objects from the schema ----

function randomObject(ctx: TypeContext, seed: number): ApiObject {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const scalar = (): unknown => pick(["a", "b", "main", "", 0, 1, 1.5, -2, true, false, null, "\u00e9", "\ud83d\ude00"]);
  // Odd values where the schema wants something else: the walks must treat them as leaves alike.
  const odd = (): unknown => pick([null, {}, [], "s", 3, { x: 1 }, [1, 1], [{}]]);
  const value = (schema: Schema, depth: number): unknown => {
    if (r() < 0.06) return odd();
    switch (schema.type) {
      case "ref": {
        const def = registry.get(schema.name);
        if (def === undefined || depth > 5) return scalar();
        const out: Record<string, unknown> = {};
        for (const [name, f] of Object.entries(def.fields)) if (r() < (depth < 2 ? 0.5 : 0.25)) out[name] = value(f.schema, depth + 1);
        if (r() < 0.05) out["unknown" + Math.floor(r() * 3)] = r() < 0.5 ? scalar() : { nested: scalar() };
        return out;
      }
      case "map": {
        const out: Record<string, unknown> = {};
        const n = Math.floor(r() * 4);
        for (let i = 0; i < n; i++) out[pick(["a", "b", "z", "1", "10", "\u00e9", "\ud83d\ude00", "\uffff"])] = value(schema.values, depth + 1);
        return out;
      }
      case "array": {
        const n = Math.floor(r() * 4);
        const items = Array.from({ length: n }, () => value(schema.items, depth + 1));
        if (n > 0 && r() < 0.2) items.push(items[0]); // a repeated item
        return items;
      }
      case "any":
        return r() < 0.5 ? scalar() : { a: [scalar()] };
      default:
        return scalar();
    }
  };
  const root = value({ type: "ref", name: ctx.type }, 0);
  const obj = (typeof root === "object" && root !== null && !Array.isArray(root) ? root : {}) as Record<string, unknown>;
  if (!(typeof obj["metadata"] === "object" && obj["metadata"] !== null && !Array.isArray(obj["metadata"]))) obj["metadata"] = { name: "x" };
  if (r() < 0.5) obj["apiVersion"] = "v1";
  if (r() < 0.5) obj["kind"] = "Kind";
  return obj as ApiObject;
}

test("a create's fieldsV1 from one walk is the general path's, byte for byte (2,000 random pods and deployments)", () => {
  let fastPaths = 0;
  for (let seed = 1; seed <= 1000; seed++) {
    for (const ctx of [POD, DEPLOYMENT]) {
      const obj = randomObject(ctx, seed);
      assertSame(obj, ctx, `seed ${seed} ${ctx.type}`);
      if (fast(obj, ctx, undefined) !== undefined) fastPaths++;
    }
  }
  assert.ok(fastPaths > 1800, `the fast path ran ${fastPaths} times of 2000`);
});

/** The object with every scalar leaf replaced by another scalar (same structure, other values). */
function otherLeaves(value: unknown, seed: number): unknown {
  const r = seededRandom(seed);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    if (v === null || v === undefined) return v;
    return r() < 0.5 ? v : ["q", "main", 7, false, "\u00e9"][Math.floor(r() * 5)];
  };
  return walk(value);
}

test("objects of one structure share the memoized fieldsV1, and it is right for each of them", () => {
  let shared = 0;
  for (let seed = 1; seed <= 500; seed++) {
    for (const ctx of [POD, DEPLOYMENT]) {
      const a = randomObject(ctx, seed);
      const b = otherLeaves(a, seed + 7) as ApiObject;
      for (const reset of [undefined, STATUS]) {
        const fa = createdFieldsV1(a as unknown as Record<string, unknown>, emptyLike(a, ctx) as unknown as Record<string, unknown>, ctx, reset, STRIPPED_FIELDS);
        const fb = createdFieldsV1(b as unknown as Record<string, unknown>, emptyLike(b, ctx) as unknown as Record<string, unknown>, ctx, reset, STRIPPED_FIELDS);
        if (fa !== undefined) assert.equal(JSON.stringify(fa), reference(a, ctx, reset), `seed ${seed}`);
        if (fb !== undefined) assert.equal(JSON.stringify(fb), reference(b, ctx, reset), `seed ${seed}, other leaves`);
        if (fa !== undefined && fa === fb) shared++;
      }
    }
  }
  assert.ok(shared > 500, `memo shared between same-structure objects ${shared} times`);
  // The bench's pods: one structure, one answer, frozen.
  const p1 = benchPod();
  const p2 = otherLeaves(benchPod(), 3) as ApiObject;
  const f1 = createdFieldsV1(p1 as unknown as Record<string, unknown>, emptyLike(p1, POD) as unknown as Record<string, unknown>, POD, STATUS, STRIPPED_FIELDS);
  const f2 = createdFieldsV1(p2 as unknown as Record<string, unknown>, emptyLike(p2, POD) as unknown as Record<string, unknown>, POD, STATUS, STRIPPED_FIELDS);
  assert.ok(Object.isFrozen(f1));
  assert.equal(JSON.stringify(f2), reference(p2, POD, STATUS));
});
