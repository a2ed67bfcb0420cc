import { test } from "node:test";
import assert from "node:assert/strict";
import { SchemaRegistry } from "../schema.js";
import { registerCoreSchemas } from "../../api/core/schemas.js";
import { APPS_TYPES } from "../../api/apps/schemas.js";
import { ApiError } from "../errors.js";
import { applyStrategicMergePatch } from "./strategic-merge.js";
import { PATCH_REJECTED_MESSAGE } from "./errors.js";

const registry = new SchemaRegistry();
registerCoreSchemas(registry);
registry.add(...APPS_TYPES);

const POD = "io.k8s.api.core.v1.Pod";
const DEPLOYMENT = "io.k8s.api.apps.v1.Deployment";

/** Applies the patch, checking that neither input changes. Typed loosely: tests read deep paths. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function smp(type: string, original: unknown, patch: unknown): any {
  const before = JSON.stringify([original, patch]);
  const out = applyStrategicMergePatch(original, patch, { registry, type });
  assert.equal(JSON.stringify([original, patch]), before, "inputs are not mutated");
  return out;
}

function pod<S>(spec: S, metadata: unknown = { name: "p" }) {
  return { apiVersion: "v1", kind: "Pod", metadata, spec };
}

function fails(type: string, original: unknown, patch: unknown, code: number, message: string | RegExp): void {
  assert.throws(
    () => applyStrategicMergePatch(original, patch, { registry, type }),
    (err: unknown) => {
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.code, code);
      if (typeof message === "string") assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    },
  );
}

// ---- the examples of "Update API Objects in Place Using kubectl patch" (our own data) ----

const demo = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web" },
  spec: {
    replicas: 2,
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        containers: [{ name: "web-server", image: "nginx" }],
        tolerations: [{ key: "dedicated", operator: "Equal", value: "team-a", effect: "NoSchedule" }],
      },
    },
  },
};

test("containers merge by name: a new container joins, patched ones come first", () => {
  const out = smp(DEPLOYMENT, demo, { spec: { template: { spec: { containers: [{ name: "cache", image: "redis" }] } } } });
  assert.deepEqual(out.spec.template.spec.containers, [
    { name: "cache", image: "redis" },
    { name: "web-server", image: "nginx" },
  ]);
  assert.equal(out.spec.replicas, 2);
  assert.deepEqual(out.spec.template.spec.tolerations, demo.spec.template.spec.tolerations);
});

test("a container patched by name changes only the fields the patch names", () => {
  const original = pod({ containers: [{ name: "app", image: "app:1", args: ["--a"] }, { name: "sidecar", image: "proxy:1" }] });
  const out = smp(POD, original, { spec: { containers: [{ name: "sidecar", image: "proxy:2" }] } });
  assert.deepEqual(out.spec.containers, [
    { name: "app", image: "app:1", args: ["--a"] },
    { name: "sidecar", image: "proxy:2" },
  ]);
});

test("tolerations have no patch strategy: the list is replaced", () => {
  const toleration = { key: "disktype", operator: "Equal", value: "ssd", effect: "NoSchedule" };
  const out = smp(DEPLOYMENT, demo, { spec: { template: { spec: { tolerations: [toleration] } } } });
  assert.deepEqual(out.spec.template.spec.tolerations, [toleration]);
  assert.deepEqual(out.spec.template.spec.containers, demo.spec.template.spec.containers);
});

test("$retainKeys clears the union members not listed (Deployment strategy)", () => {
  const rolling = { ...demo, spec: { ...demo.spec, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "30%" } } } };
  // Without the directive the old member survives (and validation would reject the result).
  assert.deepEqual(smp(DEPLOYMENT, rolling, { spec: { strategy: { type: "Recreate" } } }).spec.strategy, {
    type: "Recreate",
    rollingUpdate: { maxSurge: "30%" },
  });
  assert.deepEqual(smp(DEPLOYMENT, rolling, { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } }).spec.strategy, {
    type: "Recreate",
  });
});

// ---- the directives of the strategic-merge-patch design document ----

test("$patch: delete on a list item removes every entry with its merge key", () => {
  const original = pod({ containers: [{ name: "nginx", image: "nginx" }, { name: "log-tailer", image: "tail" }] });
  const out = smp(POD, original, { spec: { containers: [{ name: "log-tailer", $patch: "delete" }] } });
  assert.deepEqual(out.spec.containers, [{ name: "nginx", image: "nginx" }]);
});

test("$patch: delete on a map removes the map", () => {
  const rolling = { ...demo, spec: { ...demo.spec, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } };
  assert.deepEqual(smp(DEPLOYMENT, rolling, { spec: { strategy: { rollingUpdate: { $patch: "delete" } } } }).spec.strategy, { type: "RollingUpdate" });
  assert.deepEqual(smp(DEPLOYMENT, rolling, { spec: { strategy: { rollingUpdate: null } } }).spec.strategy, { type: "RollingUpdate" });
});

test("$patch: replace on a map takes the patch's map literally", () => {
  const original = pod({ containers: [{ name: "a", image: "a" }] }, { name: "p", labels: { app: "web", tier: "front", stale: "yes" } });
  const out = smp(POD, original, { metadata: { labels: { $patch: "replace", app: "api" } } });
  assert.deepEqual(out.metadata, { name: "p", labels: { app: "api" } });

  // On the spec: containers become exactly the patch's, nothing else of the old spec survives.
  const spec = smp(POD, pod({ containers: [{ name: "a", image: "a" }], restartPolicy: "Always" }), {
    spec: { $patch: "replace", containers: [{ name: "b", image: "b" }] },
  }).spec;
  assert.deepEqual(spec, { containers: [{ name: "b", image: "b" }] });
});

test("$patch: replace as a list item replaces a merging list", () => {
  const original = pod({ containers: [{ name: "a", image: "a" }, { name: "b", image: "b" }] });
  const out = smp(POD, original, { spec: { containers: [{ name: "c", image: "c" }, { $patch: "replace" }] } });
  assert.deepEqual(out.spec.containers, [{ name: "c", image: "c" }]);
});

test("$deleteFromPrimitiveList/finalizers removes values from a set", () => {
  const original = pod({ containers: [] }, { name: "p", finalizers: ["a", "b", "c"] });
  assert.deepEqual(smp(POD, original, { metadata: { "$deleteFromPrimitiveList/finalizers": ["b", "c"] } }).metadata.finalizers, ["a"]);
  // Nothing to delete from: nothing happens (the list is not created).
  assert.deepEqual(smp(POD, pod({}), { metadata: { "$deleteFromPrimitiveList/finalizers": ["x"] } }).metadata, { name: "p" });
});

test("primitive lists with the merge strategy merge as sets", () => {
  const original = pod({}, { name: "p", finalizers: ["a", "b"] });
  assert.deepEqual(smp(POD, original, { metadata: { finalizers: ["b", "c"] } }).metadata.finalizers, ["a", "b", "c"]);
  // What kubectl apply sends to go from [a, b] to [b, c].
  const applied = smp(POD, original, {
    metadata: { finalizers: ["c"], "$deleteFromPrimitiveList/finalizers": ["a"], "$setElementOrder/finalizers": ["b", "c"] },
  });
  assert.deepEqual(applied.metadata.finalizers, ["b", "c"]);
});

test("$setElementOrder orders lists of maps and of primitives", () => {
  const original = pod(
    { containers: [{ name: "a", image: "a" }, { name: "b", image: "b" }, { name: "c", image: "c" }] },
    { name: "p", finalizers: ["a", "b", "c"] },
  );
  const out = smp(POD, original, {
    metadata: { "$setElementOrder/finalizers": ["b", "c", "a"] },
    spec: { "$setElementOrder/containers": [{ name: "b" }, { name: "c" }, { name: "a" }] },
  });
  assert.deepEqual(out.metadata.finalizers, ["b", "c", "a"]);
  assert.deepEqual(out.spec.containers.map((c: { name: string }) => c.name), ["b", "c", "a"]);

  // With content changes: the patched container moves to where the order says; unlisted ones keep their place.
  const changed = smp(POD, original, {
    spec: { "$setElementOrder/containers": [{ name: "c" }, { name: "a" }], containers: [{ name: "c", image: "c2" }] },
  });
  assert.deepEqual(changed.spec.containers, [
    { name: "b", image: "b" },
    { name: "c", image: "c2" },
    { name: "a", image: "a" },
  ]);
});

test("container ports merge by containerPort", () => {
  const original = pod({ containers: [{ name: "web", image: "nginx", ports: [{ containerPort: 80, name: "http" }, { containerPort: 9090 }] }] });
  const out = smp(POD, original, {
    spec: { containers: [{ name: "web", ports: [{ containerPort: 80, protocol: "TCP" }, { containerPort: 443, name: "https" }] }] },
  });
  assert.deepEqual(out.spec.containers[0].ports, [
    { containerPort: 80, name: "http", protocol: "TCP" },
    { containerPort: 443, name: "https" },
    { containerPort: 9090 },
  ]);
});

test("env merges by name; an entry can be deleted", () => {
  const original = pod({ containers: [{ name: "app", env: [{ name: "A", value: "1" }, { name: "B", value: "2" }, { name: "C", value: "3" }] }] });
  const out = smp(POD, original, {
    spec: { containers: [{ name: "app", env: [{ name: "B", value: "20" }, { name: "D", value: "4" }, { name: "C", $patch: "delete" }] }] },
  });
  assert.deepEqual(out.spec.containers[0].env, [
    { name: "A", value: "1" },
    { name: "B", value: "20" },
    { name: "D", value: "4" },
  ]);
});

test("volumes merge by name and carry $retainKeys per item (merge,retainKeys)", () => {
  const original = pod({ volumes: [{ name: "conf", configMap: { name: "old" } }, { name: "data", emptyDir: {} }] });
  const out = smp(POD, original, { spec: { volumes: [{ name: "conf", $retainKeys: ["name", "secret"], secret: { secretName: "s" } }] } });
  assert.deepEqual(out.spec.volumes, [
    { name: "conf", secret: { secretName: "s" } },
    { name: "data", emptyDir: {} },
  ]);
});

test("maps merge recursively and null deletes", () => {
  const original = pod({ nodeSelector: { zone: "a", disk: "ssd" } }, { name: "p", labels: { a: "1", b: "2" }, annotations: { x: "y" } });
  const out = smp(POD, original, { metadata: { labels: { b: null, c: "3" }, annotations: null }, spec: { nodeSelector: { zone: "b" } } });
  assert.deepEqual(out.metadata, { name: "p", labels: { a: "1", c: "3" } });
  assert.deepEqual(out.spec.nodeSelector, { zone: "b", disk: "ssd" });
});

test("fields outside the schema merge like JSON merge patch", () => {
  const original = pod({ containers: [], future: { keep: 1, change: 1, list: [1, 2] } });
  const out = smp(POD, original, { spec: { future: { change: 2, list: [3], gone: null } }, extra: { a: null, b: 1 } });
  assert.deepEqual(out.spec.future, { keep: 1, change: 2, list: [3] });
  assert.deepEqual(out.extra, { b: 1 });
});

test("a patch value with no counterpart is stored without its directives or nulls", () => {
  const out = smp(POD, pod({}), {
    spec: { containers: [{ name: "a", image: "a", resources: null, env: [{ name: "X", value: "1" }, { name: "Y", $patch: "delete" }] }] },
  });
  assert.deepEqual(out.spec.containers, [{ name: "a", image: "a", env: [{ name: "X", value: "1" }] }]);
});

test("a null patch changes nothing; the result never aliases the original", () => {
  const original = pod({ containers: [{ name: "a", image: "a" } as object] });
  const same = smp(POD, original, null);
  assert.deepEqual(same, original);
  same.spec.containers.push({ name: "b" });
  assert.equal(original.spec.containers.length, 1);
  assert.deepEqual(smp(POD, original, {}), original);
});

// ---- errors, with upstream's status codes and messages ----

test("errors: merge keys and directives", () => {
  const original = pod({ containers: [{ name: "app", image: "a" }] });
  fails(POD, original, { spec: { containers: [{ image: "nginx" }] } }, 500, "map: map[image:nginx] does not contain declared merge key: name");
  fails(POD, original, { spec: { containers: [{ $patch: "delete", image: "x" }] } }, 500, "map: map[$patch:delete image:x] does not contain declared merge key: name");
  fails(POD, original, { spec: { $patch: "merge", hostname: "h" } }, 500, "unknown patch type: merge in map: map[$patch:merge hostname:h]");
  fails(POD, original, { spec: { containers: [{ name: "app", $patch: "merge" }] } }, 500, "merging lists cannot yet be specified in the patch");
  fails(POD, original, { spec: { containers: [{ name: "app", $patch: "bogus" }] } }, 500, "unknown patch type: bogus in map: map[$patch:bogus name:app]");
  const unclassified = (() => {
    try {
      applyStrategicMergePatch(original, { spec: { containers: [{ image: "nginx" }] } }, { registry, type: POD });
    } catch (err) {
      return err as ApiError;
    }
    return undefined;
  })();
  assert.equal(unclassified?.reason, "", "upstream answers these with reason Unknown");
});

test("errors: malformed directives are 400s", () => {
  const original = pod({ containers: [] }, { name: "p", finalizers: ["a"] });
  fails(POD, original, { spec: { $retainKeys: "hostname", hostname: "h" } }, 400, "invalid patch format of retainKeys");
  fails(POD, original, { spec: { $retainKeys: ["hostname"], hostname: "h", subdomain: "s" } }, 400, "invalid patch format of retainKeys");
  fails(POD, original, { metadata: { $deleteFromPrimitiveList: ["a"] } }, 400, "invalid patch format of primitive list");
  fails(POD, original, { metadata: { "$deleteFromPrimitiveList/finalizers": "a" } }, 400, "invalid patch format of primitive list");
  fails(POD, original, { metadata: { $setElementOrder: ["a"] } }, 400, "invalid patch format of setElementOrder list");
  fails(POD, original, { metadata: { "$setElementOrder/finalizers": "a" } }, 500, "expected a []interface {}, but received a string");
});

test("errors: $setElementOrder must agree with the patch list", () => {
  const original = pod({ containers: [{ name: "a" }, { name: "b" }] });
  fails(
    POD,
    original,
    { spec: { "$setElementOrder/containers": [{ name: "a" }], containers: [{ name: "b", image: "x" }] } },
    500,
    /^The order in patch list:\n\[map\[image:x name:b\]\]\n doesn't match \$setElementOrder list:\n\[map\[name:a\]\]\n$/,
  );
});

test("errors: the body must be an object; lists of lists are a 422", () => {
  fails(POD, pod({}), [{ spec: {} }], 400, "json: cannot unmarshal array into Go value of type map[string]interface {}");
  fails(POD, pod({}), "x", 400, "json: cannot unmarshal string into Go value of type map[string]interface {}");
  fails(POD, pod({}, { name: "p", finalizers: ["a"] }), { metadata: { finalizers: [["b"]] } }, 422, PATCH_REJECTED_MESSAGE);
  fails(POD, pod({}, { name: "p", finalizers: ["a"] }), { metadata: { finalizers: [1] } }, 500, "list element types are not identical: [[a] [1]]");
});

test("nothing is half-applied when a later part of the patch fails", () => {
  const original = pod({ containers: [{ name: "app", image: "a" }] }, { name: "p", labels: { a: "1" } });
  const before = JSON.stringify(original);
  assert.throws(() =>
    applyStrategicMergePatch(original, { metadata: { labels: { a: "2" } }, spec: { containers: [{ image: "x" }] } }, { registry, type: POD }),
  );
  assert.equal(JSON.stringify(original), before);
});
