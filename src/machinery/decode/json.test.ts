import { test } from "node:test";
import assert from "node:assert/strict";
import { parseJsonBody, JsonSyntaxError, scanJson, MAX_JSON_DEPTH } from "./json.js";
import { isApiError } from "../index.js";
import { POD_JSON } from "./testing.js";

function parseError(text: string | Buffer, options = {}): { code: number; message: string; cause: JsonSyntaxError } {
  try {
    parseJsonBody(text, options);
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return { code: err.code, message: err.message, cause: err.cause as JsonSyntaxError };
  }
  assert.fail(`parsed: ${String(text).slice(0, 40)}`);
}

test("values match JSON.parse; no duplicates in an ordinary body", () => {
  const r = parseJsonBody(POD_JSON);
  assert.deepEqual(r.value, JSON.parse(POD_JSON));
  assert.deepEqual(r.duplicates, []);
  assert.deepEqual(parseJsonBody(Buffer.from(' {"a":"é\\u00e9","b":[1,-2.5e3,true,null]} ')).value, { a: "éé", b: [1, -2500, true, null] });
});

test("duplicates at several depths, upstream's paths, the last value kept", () => {
  const body = `{
    "metadata": {"name": "a", "labels": {"x": "1", "x": "2"}, "name": "b"},
    "spec": {
      "replicas": 1,
      "template": {"spec": {"containers": [{"name": "c"}, {"name": "d", "image": "i", "image": "j"}]}},
      "replicas": 3
    },
    "kind": "Deployment",
    "kind": "Deployment"
  }`;
  const r = parseJsonBody(body);
  assert.deepEqual(r.duplicates, [
    "metadata.labels.x",
    "metadata.name",
    "spec.template.spec.containers[1].image",
    "spec.replicas",
    "kind",
  ]);
  const v = r.value as { metadata: { name: string; labels: { x: string } }; spec: { replicas: number; template: { spec: { containers: { image?: string }[] } } } };
  assert.equal(v.metadata.name, "b");
  assert.equal(v.metadata.labels.x, "2");
  assert.equal(v.spec.replicas, 3);
  assert.equal(v.spec.template.spec.containers[1]!.image, "j");
});

test("duplicate detection: escaped keys compare decoded, big objects switch to a set, arrays of arrays index", () => {
  assert.deepEqual(parseJsonBody('{"a\\u0062":1,"ab":2}').duplicates, ["ab"]);
  const many = "{" + Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(",") + ',"k7":0,"k39":0}';
  assert.deepEqual(parseJsonBody(many).duplicates, ["k7", "k39"]);
  assert.deepEqual(parseJsonBody('[[{}],[{"a":1,"a":2}]]').duplicates, ["[1][0].a"]);
  assert.deepEqual(parseJsonBody('{"a":"\\"b\\":1,\\"b\\":2","b":{}}').duplicates, [], "quotes inside strings are not keys");
});

test("a __proto__ key stays data", () => {
  const v = parseJsonBody('{"__proto__":{"polluted":true},"a":1}').value as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  assert.deepEqual(Object.keys(v), ["__proto__", "a"]);
});

test("syntax errors: Go's wording, byte offset, line and column", () => {
  const cases: Array<[string, string, number]> = [
    ["", "unexpected end of JSON input", 0],
    ['{"a":1', "unexpected end of JSON input", 6],
    ["{,}", "invalid character ',' looking for beginning of object key string", 1],
    ['{"a" 1}', "invalid character '1' after object key", 5],
    ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair", 7],
    ["[1 2]", "invalid character '2' after array element", 3],
    ["[1,]", "invalid character ']' looking for beginning of value", 3],
    ["{} x", "invalid character 'x' after top-level value", 3],
    ["tru", "unexpected end of JSON input", 3],
    ["trux", "invalid character 'x' in literal true (expecting 'e')", 3],
    ["nul!", "invalid character '!' in literal null (expecting 'l')", 3],
    ["-a", "invalid character 'a' in numeric literal", 1],
    ["1.x", "invalid character 'x' after decimal point in numeric literal", 2],
    ["1e+x", "invalid character 'x' in exponent of numeric literal", 3],
    ["01", "invalid character '1' after top-level value", 1],
    ['"a\tb"', "invalid character '\\t' in string literal", 2],
    ['"\\x"', "invalid character 'x' in string escape code", 2],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape", 5],
    ["'a'", "invalid character '\\'' looking for beginning of value", 0],
  ];
  for (const [text, message, offset] of cases) {
    const e = parseError(text);
    assert.equal(e.code, 400);
    assert.equal(e.cause.message, message, text);
    assert.equal(e.cause.offset, offset, `offset of ${text}`);
  }
  // Offsets count UTF-8 bytes; lines and columns count from 1.
  const e = parseError('{\n  "é": 1,\n  "b": }');
  assert.equal(e.cause.message, "invalid character '}' looking for beginning of value");
  assert.deepEqual([e.cause.line, e.cause.column, e.cause.offset], [3, 8, 20]);
  assert.equal(e.message, "json parse error: invalid character '}' looking for beginning of value (line 3, column 8, byte 20)");
  assert.equal(parseError("é").cause.message, "invalid character 'Ã' looking for beginning of value");
});

test("nesting: MAX_JSON_DEPTH levels parse, one more is a 400 at the offending bracket, without a stack overflow", () => {
  const ok = "[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH);
  assert.ok(Array.isArray(parseJsonBody(ok).value));
  const deep = "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1);
  const e = parseError(deep);
  assert.equal(e.code, 400);
  assert.equal(e.cause.message, "invalid character '[' exceeded max depth");
  assert.equal(e.cause.offset, MAX_JSON_DEPTH);
  // A megabyte of openers is refused after the limit, quickly.
  const t = performance.now();
  const huge = parseError('{"a":' .repeat(200_000));
  assert.match(huge.cause.message, /exceeded max depth/);
  assert.ok(performance.now() - t < 2000, "refused at the limit, not after reading everything");
  // A syntax error before the limit is reported first, as Go's scanner would.
  assert.match(parseError("[x" + "[".repeat(MAX_JSON_DEPTH + 5)).cause.message, /'x' looking for beginning of value/);
  assert.match(parseError("[[[1]]]", { maxDepth: 2 }).cause.message, /exceeded max depth/);
});

test("a 1 MB body parses (no recursion), duplicates found deep inside it", () => {
  const items = Array.from({ length: 300 }, () => POD_JSON).join(",");
  const body = `{"kind":"PodList","items":[${items},{"metadata":{"name":"x","name":"y"}}]}`;
  assert.ok(body.length > 1_000_000);
  const r = parseJsonBody(body);
  assert.equal((r.value as { items: unknown[] }).items.length, 301);
  assert.deepEqual(r.duplicates, ["items[300].metadata.name"]);
});

test("size limit: 413 above maxBytes, counted in UTF-8 bytes", () => {
  assert.equal(parseError('{"a":"xxxxxxxx"}', { maxBytes: 10 }).code, 413);
  assert.equal(parseError(`"${"é".repeat(6)}"`, { maxBytes: 13 }).code, 413);
  assert.equal(parseJsonBody(`"${"é".repeat(5)}"`, { maxBytes: 12 }).value, "ééééé");
});

test("the validating scanner agrees with JSON.parse on valid and invalid inputs", () => {
  const samples = ["{}", "[]", '""', "0", "-0.5e-3", '{"a":[{"b":null}]}', "[1,[2,[3]]]", '"\\ud83d\\ude00"', " true ", "{]", "[}", '{"a":}', "1.", "-", '"\\u00"', "[01]"];
  for (const s of samples) {
    let native = true;
    try {
      JSON.parse(s);
    } catch {
      native = false;
    }
    assert.equal(!(scanJson(s, 100) instanceof JsonSyntaxError), native, s);
  }
});
