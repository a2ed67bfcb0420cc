import { test } from "node:test";
import assert from "node:assert/strict";
import { parseDocument } from "yaml";
import { parseYamlBody, toYaml, yamlDuplicateMessage, yamlTooDeep, MAX_YAML_DEPTH } from "./yaml.js";
import { isApiError } from "../index.js";
import { podObject } from "./testing.js";

function yamlError(text: string, options = {}): { code: number; message: string } {
  try {
    parseYamlBody(text, options);
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return { code: err.code, message: err.message };
  }
  assert.fail(`parsed: ${text.slice(0, 40)}`);
}

const DEPLOYMENT_WITH_DUPLICATES = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  name: web2
spec:
  paused: true
  paused: false
  template:
    spec:
      containers:
      - name: nginx
        imagePullPolicy: Always
        imagePullPolicy: Never
`;

test("duplicates at several depths: paths, lines, last value kept", () => {
  const r = parseYamlBody(DEPLOYMENT_WITH_DUPLICATES);
  assert.deepEqual(r.duplicates, ["metadata.name", "spec.paused", "spec.template.spec.containers[0].imagePullPolicy"]);
  assert.deepEqual(
    r.duplicateKeys.map(yamlDuplicateMessage),
    ['line 5: key "name" already set in map', 'line 8: key "paused" already set in map', 'line 14: key "imagePullPolicy" already set in map'],
  );
  const v = r.value as { metadata: { name: string }; spec: { paused: boolean; template: { spec: { containers: { imagePullPolicy: string }[] } } } };
  assert.equal(v.metadata.name, "web2");
  assert.equal(v.spec.paused, false);
  assert.equal(v.spec.template.spec.containers[0]!.imagePullPolicy, "Never");
});

test("keys that become the same JSON key are duplicates; merge keys are not", () => {
  assert.deepEqual(parseYamlBody('a: 1\n"a": 2\n').duplicates, ["a"]);
  assert.deepEqual(parseYamlBody("1: a\n'1': b\n").duplicates, ["1"]);
  const merged = parseYamlBody("base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  x: 3\n");
  assert.deepEqual(merged.duplicates, []);
  assert.deepEqual(merged.value, { base: { x: 1, z: 2 }, m: { x: 3, z: 2 } });
});

test("YAML 1.1 scalars as upstream's go-yaml v2 reads them (keys too: on, n); timestamps stay strings", () => {
  const r = parseYamlBody("a: yes\nb: off\nc: 0777\nd: 0x1f\ne: ~\nf: 2001-12-14t21:59:43.10-05:00\ng: 2026-01-02\nh: 1:20\ni: '123'\nj: 1.5\non: 1\nn: y\n");
  assert.deepEqual(r.value, { a: true, b: false, c: 511, d: 31, e: null, f: "2001-12-14t21:59:43.10-05:00", g: "2026-01-02", h: "1:20", i: "123", j: 1.5, true: 1, false: true });
});

test("no custom tags: binary, sets and unknown tags stay plain data", () => {
  const r = parseYamlBody("a: !!binary aGVsbG8=\nb: !foo bar\n");
  assert.deepEqual(r.value, { a: "aGVsbG8=", b: "bar" });
});

test("values JSON cannot carry are a 400", () => {
  assert.match(yamlError("a: .inf\n").message, /unsupported value: \+Inf/);
  assert.match(yamlError("a: .nan\n").message, /unsupported value: NaN/);
  assert.match(yamlError("? [a]\n: 1\n").message, /invalid map key/);
});

test("billion laughs is refused quickly with a clear message", () => {
  const laughs = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
  const names = "abcdefghi";
  for (let k = 1; k < names.length; k++) {
    const prev = names[k - 1]!;
    laughs.push(`${names[k]}: &${names[k]} [${Array(9).fill("*" + prev).join(", ")}]`);
  }
  const t = performance.now();
  const e = yamlError(laughs.join("\n") + "\n");
  const ms = performance.now() - t;
  assert.equal(e.code, 400);
  assert.match(e.message, /^yaml: document contains excessive aliasing/);
  // Expanding it would take minutes and gigabytes; the bound only tells refusal from expansion, loaded machine or not.
  assert.ok(ms < 2000, `${ms} ms`);
  // A few aliases, as real manifests use them, are fine.
  assert.deepEqual(parseYamlBody("x: &x {a: 1}\nw: *x\nz: *x\n").value, { x: { a: 1 }, w: { a: 1 }, z: { a: 1 } });
});

test("nesting is refused before the library recurses (flow, block, compact sequences)", () => {
  for (const text of [
    "[".repeat(20_000) + "]".repeat(20_000),
    "{a: ".repeat(5_000) + "1" + "}".repeat(5_000),
    "- ".repeat(1_000) + "x\n",
    Array.from({ length: 400 }, (_, i) => " ".repeat(i) + "k:").join("\n") + "\n",
  ]) {
    const t = performance.now();
    const e = yamlError(text);
    assert.equal(e.code, 400);
    assert.match(e.message, new RegExp(`exceeded max depth of ${MAX_YAML_DEPTH}`));
    assert.ok(performance.now() - t < 2000, "refused early, not parsed to the bottom");
  }
  // Depth up to the limit parses.
  const ok = "[".repeat(MAX_YAML_DEPTH - 1) + "]".repeat(MAX_YAML_DEPTH - 1);
  assert.ok(Array.isArray(parseYamlBody(ok).value));
});

test("the depth pre-scan ignores brackets in strings, comments and block scalars", () => {
  const text = `a: "[[[[[[[["\nb: '{{{{{{{'\nc: x[[[[[[\n# [[[[[[[[[[\nd: |\n  [[[[[[[[[[\n  {{{{{{{{{\ne: 1\n`;
  assert.equal(yamlTooDeep(text, 4), 0);
  assert.deepEqual(parseYamlBody(text).value, { a: "[[[[[[[[", b: "{{{{{{{", c: "x[[[[[[", d: "[[[[[[[[[[\n{{{{{{{{{\n", e: 1 });
});

test("errors name line and column; several documents are a 400", () => {
  const e = yamlError("a: 1\nb: c: d\n");
  assert.equal(e.code, 400);
  assert.match(e.message, /^yaml: line 2, column 4: /);
  assert.equal(yamlError("a: 1\n---\nb: 2\n").message, "yaml: line 2: the request body must hold a single YAML document");
  assert.deepEqual(parseYamlBody("---\na: 1\n").value, { a: 1 });
  assert.equal(parseYamlBody("# only a comment\n").value, null);
});

test("size limit: 413", () => {
  assert.equal(yamlError("a: xxxxxxxxxxxxxxxxxxxx\n", { maxBytes: 10 }).code, 413);
});

test("toYaml: block style, object order, quotes only where a YAML 1.1 reader needs them", () => {
  const out = toYaml({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", resourceVersion: "12", creationTimestamp: "2026-01-02T03:04:05Z", labels: {} },
    data: { yes: "yes", octal: "0777", empty: "", colon: "a: b", multi: "l1\nl2\n", plain: "hello world", null: "null", num: 1.5 },
    list: [{ name: "a", ports: [80, 443] }, []],
  });
  assert.equal(
    out,
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  resourceVersion: "12"
  creationTimestamp: "2026-01-02T03:04:05Z"
  labels: {}
data:
  "yes": "yes"
  octal: "0777"
  empty: ""
  colon: "a: b"
  multi: |
    l1
    l2
  plain: hello world
  "null": "null"
  num: 1.5
list:
- name: a
  ports:
  - 80
  - 443
- []
`,
  );
  assert.equal(toYaml({ b: 1, a: 2 }, { sortKeys: true }), "a: 2\nb: 1\n");
  // Round trip through a YAML 1.1 reader.
  const pod = podObject();
  assert.deepEqual(parseDocument(toYaml(pod), { schema: "yaml-1.1" }).toJS(), pod);
  assert.deepEqual(parseYamlBody(toYaml(pod)).value, pod);
});
