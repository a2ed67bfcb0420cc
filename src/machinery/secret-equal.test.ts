import { test } from "node:test";
import assert from "node:assert/strict";
import { secretEqual } from "./secret-equal.js";
import { TokenAuthenticator } from "../apiserver/filters/authentication.js";
import type { Incoming } from "../apiserver/http/respond.js";

test("secretEqual: equal secrets only, whatever their lengths", () => {
  assert.equal(secretEqual("abc.0123456789abcdef", "abc.0123456789abcdef"), true);
  assert.equal(secretEqual("abc.0123456789abcdef", "abc.0123456789abcdeg"), false);
  assert.equal(secretEqual("abc", "abc.0123456789abcdef"), false);
  assert.equal(secretEqual("", "x"), false);
  assert.equal(secretEqual("", ""), true);
});

test("TokenAuthenticator: the user of the exact token; prefixes, extensions and other schemes are nobody", () => {
  const a = new TokenAuthenticator(new Map([
    ["tok-alice", { name: "alice", groups: [] }],
    ["tok-bob", { name: "bob", groups: [] }],
  ]));
  const as = (authorization: string) => a.authenticate({ headers: { authorization } } as Incoming)?.name;
  assert.equal(as("Bearer tok-alice"), "alice");
  assert.equal(as("Bearer tok-bob"), "bob");
  assert.equal(as("Bearer tok-ali"), undefined);
  assert.equal(as("Bearer tok-alice2"), undefined);
  assert.equal(as("Bearer "), undefined);
  assert.equal(as("Basic tok-alice"), undefined);
});
