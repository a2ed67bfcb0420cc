import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeContinue, decodeContinueToken, encodeContinue, encodeContinueToken } from "./continue-token.js";
import { ApiError } from "./errors.js";

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64url");

test("tokens have upstream's shape: base64url of {v, rv, start}", () => {
  const token = encodeContinueToken({ resourceVersion: 12, startKey: "default/web\u0000" });
  assert.doesNotMatch(token, /[=+/]/);
  assert.equal(Buffer.from(token, "base64url").toString("utf8"), `{"v":"meta.k8s.io/v1","rv":12,"start":"default/web\\u0000"}`);
  assert.deepEqual(decodeContinueToken(token), { resourceVersion: 12, startKey: "default/web\u0000" });
});

test("encodeContinue/decodeContinue work relative to the key prefix", () => {
  const token = encodeContinue("/registry/pods/default/web\u0000", "/registry/pods", 7);
  assert.deepEqual(decodeContinueToken(token), { resourceVersion: 7, startKey: "default/web\u0000" });
  assert.deepEqual(decodeContinue(token, "/registry/pods/"), { key: "/registry/pods/default/web\u0000", resourceVersion: 7 });
  assert.throws(() => encodeContinue("/registry/services/x", "/registry/pods/", 7));
  assert.throws(() => encodeContinue("/registry/pods/", "/registry/pods/", 7));
});

test("a leading slash in the start key is accepted, as upstream", () => {
  assert.deepEqual(decodeContinueToken(b64(`{"v":"meta.k8s.io/v1","rv":3,"start":"/a/b"}`)), { resourceVersion: 3, startKey: "a/b" });
  assert.deepEqual(decodeContinueToken(b64(`{"v":"meta.orch.io/v1","rv":3,"start":"a"}`)), { resourceVersion: 3, startKey: "a" });
});

const bad: Array<[string, string, string]> = [
  ["not base64url", "a+b", "continue key is not valid: illegal base64 data at input byte 1"],
  ["padding", b64("{}") + "=", "continue key is not valid: illegal base64 data at input byte 3"],
  ["dangling bits", "abcde", "continue key is not valid: illegal base64 data at input byte 4"],
  ["not JSON", b64("nope"), "continue key is not valid: "],
  ["not an object", b64("[1]"), "continue key is not valid: token is not a JSON object"],
  ["unknown version", b64(`{"v":"v2","rv":1,"start":"a"}`), `continue key is not valid: server does not recognize this encoded version "v2"`],
  ["zero rv", b64(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`), "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"],
  ["missing rv", b64(`{"v":"meta.k8s.io/v1","start":"a"}`), "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"],
  ["fractional rv", b64(`{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}`), "continue key is not valid: resourceVersion is not an integer"],
  ["empty start", b64(`{"v":"meta.k8s.io/v1","rv":1,"start":""}`), "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"],
  ["traversal ..", b64(`{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}`), "continue key is not valid: ../secrets/x"],
  ["traversal inside", b64(`{"v":"meta.k8s.io/v1","rv":1,"start":"a/../../b"}`), "continue key is not valid: a/../../b"],
  ["dot segment", b64(`{"v":"meta.k8s.io/v1","rv":1,"start":"./a"}`), "continue key is not valid: ./a"],
  ["double slash", b64(`{"v":"meta.k8s.io/v1","rv":1,"start":"a//b"}`), "continue key is not valid: a//b"],
  ["trailing slash", b64(`{"v":"meta.k8s.io/v1","rv":1,"start":"a/"}`), "continue key is not valid: a/"],
];

for (const [name, token, prefix] of bad) {
  test(`reject token: ${name}`, () => {
    assert.throws(
      () => decodeContinueToken(token),
      (e: unknown) => e instanceof ApiError && e.code === 400 && e.message.startsWith(`invalid continue token: ${prefix}`),
    );
  });
}
