import { test } from "node:test";
import assert from "node:assert/strict";
import { checkFields, fieldValidation, parseFieldValidation } from "./field-validation.js";
import { parseJsonBody } from "./json.js";
import { parseYamlBody } from "./yaml.js";
import { aggregateFieldErrors, isApiError, type ApiError } from "../index.js";
import { registry, podObject, POD_TYPE, DEPLOYMENT_TYPE } from "./testing.js";

const reg = registry();

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return err;
  }
  assert.fail("did not throw");
}

// upstream's test body (test/integration/apiserver/field_validation_test.go), with a few extras.
const INVALID_DEPLOYMENT = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "dupename", "name": "web", "unknownMeta": "x", "labels": {"app": "nginx"}},
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}
    }
  }
}`;

test("a valid pod: nothing unknown, no type errors, the very same object back", () => {
  const pod = podObject();
  const r = checkFields(pod, POD_TYPE, reg);
  assert.deepEqual(r.unknown, []);
  assert.deepEqual(r.typeErrors, []);
  assert.equal(r.value, pod);
});

test("unknown fields in a Deployment: upstream's paths, dropped from a copy, input untouched", () => {
  const { value, duplicates } = parseJsonBody(INVALID_DEPLOYMENT);
  const before = JSON.stringify(value);
  const r = checkFields(value, DEPLOYMENT_TYPE, reg);
  assert.deepEqual(r.unknown, ["metadata.unknownMeta", "spec.unknown1", "spec.unknownDupe", "spec.template.spec.containers[0].unknownNested"]);
  assert.deepEqual(r.typeErrors, []);
  assert.equal(JSON.stringify(value), before, "input not mutated");
  const cleaned = r.value as { metadata: Record<string, unknown>; spec: { template: { spec: { containers: Record<string, unknown>[] } } } & Record<string, unknown> };
  assert.deepEqual(Object.keys(cleaned.metadata), ["name", "labels"]);
  assert.deepEqual(Object.keys(cleaned.spec), ["paused", "selector", "template"]);
  assert.deepEqual(cleaned.spec.template.spec.containers[0], { name: "nginx", image: "nginx:latest", imagePullPolicy: "Never" });
  // Untouched subtrees are shared, not copied.
  assert.equal(cleaned.spec["selector"], (value as { spec: { selector: unknown } }).spec.selector);
  assert.deepEqual(duplicates, ["metadata.name", "spec.unknownDupe", "spec.paused", "spec.template.spec.containers[0].imagePullPolicy"]);
});

test("unknown fields in a Pod at several depths; maps, any and well-known types accept their contents", () => {
  const pod = podObject() as { metadata: Record<string, unknown>; spec: Record<string, unknown> & { containers: Record<string, unknown>[] } };
  pod.metadata["labels"] = { "any.key/here": "v" };
  pod.metadata["managedFields"] = [{ manager: "kubectl", fieldsV1: { "f:spec": { "f:anything": {} } }, bogus: 1 }];
  pod.spec.containers[0]!["resources"] = { limits: { cpu: 2, memory: "1Gi" }, unknownRes: {} };
  pod.spec.containers[0]!["livenessProbe"] = { httpGet: { port: "http", path: "/", extra: true } };
  // Keys that name Object.prototype members must not find them, and "__proto__" stays data.
  const body = JSON.parse(JSON.stringify(pod).replace('"spec":{', '"spec":{"constructor":1,"__proto__":{"x":1},')) as unknown;
  const r = checkFields(body, POD_TYPE, reg);
  assert.deepEqual(r.unknown, [
    "metadata.managedFields[0].bogus",
    "spec.constructor",
    "spec.__proto__",
    "spec.containers[0].resources.unknownRes",
    "spec.containers[0].livenessProbe.httpGet.extra",
  ]);
  assert.deepEqual(r.typeErrors, []);
  const spec = (r.value as { spec: object }).spec;
  assert.equal(Object.getPrototypeOf(spec), Object.prototype);
  assert.equal(Object.hasOwn(spec, "__proto__"), false);
});

test("type errors: upstream's OpenAPI wording, always reported, with the right JSON type names", () => {
  const body = {
    apiVersion: "apps/v1",
    kind: 7,
    metadata: { name: ["x"], labels: { a: 1 } },
    spec: {
      replicas: "3",
      paused: "false",
      minReadySeconds: 1.5,
      selector: "app=web",
      template: { spec: { containers: { name: "c" }, terminationGracePeriodSeconds: null } },
      strategy: { rollingUpdate: { maxSurge: true } },
    },
  };
  const r = checkFields(body, DEPLOYMENT_TYPE, reg);
  assert.deepEqual(
    r.typeErrors.map((e) => aggregateFieldErrors([e])),
    [
      'kind: Invalid value: "integer": kind in body must be of type string: "integer"',
      'metadata.name: Invalid value: "array": metadata.name in body must be of type string: "array"',
      'metadata.labels.a: Invalid value: "integer": metadata.labels.a in body must be of type string: "integer"',
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      'spec.paused: Invalid value: "string": spec.paused in body must be of type boolean: "string"',
      'spec.minReadySeconds: Invalid value: "number": spec.minReadySeconds in body must be of type integer: "number"',
      'spec.selector: Invalid value: "string": spec.selector in body must be of type object: "string"',
      'spec.template.spec.containers: Invalid value: "object": spec.template.spec.containers in body must be of type array: "object"',
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: "boolean": spec.strategy.rollingUpdate.maxSurge in body must be of type integer,string: "boolean"',
    ],
  );
  assert.equal(r.typeErrors[0]!.type, "FieldValueTypeInvalid");
  assert.deepEqual(checkFields([], POD_TYPE, reg).typeErrors.map((e) => e.detail), ['body must be of type object: "array"']);
});

test("fieldValidation: Ignore says nothing; Warn one warning per field, default when absent", () => {
  const unknown = ["spec.foo", "spec.bar"];
  const dups = ["spec.replicas", "spec.foo.x"];
  assert.deepEqual(fieldValidation("Ignore", unknown, dups), { warnings: [] });
  const warn = ['unknown field "spec.foo"', 'unknown field "spec.bar"', 'duplicate field "spec.replicas"'];
  assert.deepEqual(fieldValidation("Warn", unknown, dups), { warnings: warn }, "a duplicate inside an unknown field is reported as unknown only");
  assert.deepEqual(fieldValidation(undefined, unknown, dups), { warnings: warn });
  assert.deepEqual(fieldValidation("", unknown, dups), { warnings: warn });
  assert.deepEqual(fieldValidation("Strict", [], []), { warnings: [] });
});

test("fieldValidation Strict: 400 listing every field, with upstream's decode prefix when the kind is known", () => {
  const e = thrown(() => fieldValidation("Strict", ["spec.foo"], ["replicas"]));
  assert.equal(e.code, 400);
  assert.equal(e.reason, "BadRequest");
  assert.equal(e.message, 'strict decoding error: unknown field "spec.foo", duplicate field "replicas"');
  const full = thrown(() => fieldValidation("Strict", ["spec.unknown1"], ["spec.paused"], { kind: "Deployment", version: "v1" }));
  assert.equal(full.message, 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.unknown1", duplicate field "spec.paused"');
});

test("the whole pipeline on upstream's JSON and YAML bodies", () => {
  const json = parseJsonBody(INVALID_DEPLOYMENT);
  const jsonCheck = checkFields(json.value, DEPLOYMENT_TYPE, reg);
  assert.deepEqual(fieldValidation("Warn", jsonCheck.unknown, json.duplicates).warnings, [
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'duplicate field "metadata.name"',
    'duplicate field "spec.paused"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
  ]);

  const yaml = parseYamlBody(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: web
  unknownMeta: x
spec:
  unknown1: val1
  paused: true
  paused: false
`);
  const yamlCheck = checkFields(yaml.value, DEPLOYMENT_TYPE, reg);
  // Paths, as for JSON ...
  assert.deepEqual(fieldValidation("Warn", yamlCheck.unknown, yaml.duplicates).warnings, [
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.unknown1"',
    'duplicate field "metadata.name"',
    'duplicate field "spec.paused"',
  ]);
  // ... or upstream's YAML wording, when given the lines.
  assert.deepEqual(fieldValidation("Warn", yamlCheck.unknown, yaml.duplicateKeys).warnings, [
    'line 5: key "name" already set in map',
    'line 10: key "paused" already set in map',
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.unknown1"',
  ]);
  assert.equal(
    thrown(() => fieldValidation("Strict", yamlCheck.unknown, yaml.duplicateKeys, { kind: "Deployment", version: "v1" })).message,
    'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 10: key "paused" already set in map, unknown field "metadata.unknownMeta", unknown field "spec.unknown1"',
  );
});

test("an invalid level is upstream's 422 from options validation", () => {
  const e = thrown(() => fieldValidation("strict", [], []));
  assert.equal(e.code, 400, "the issue asks for 400 where upstream says 422");
  assert.equal(e.reason, "BadRequest");
  assert.equal(e.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"');
  assert.deepEqual(e.status.details?.causes, [
    { reason: "FieldValueNotSupported", message: 'Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"', field: "fieldValidation" },
  ]);
  const patch = thrown(() => parseFieldValidation("All", { optionsKind: "PatchOptions", metaGroup: "meta.orch.io" }));
  assert.match(patch.message, /^PatchOptions\.meta\.orch\.io "" is invalid: fieldValidation: Unsupported value: "All"/);
  assert.equal(parseFieldValidation(null), "Warn");
});
