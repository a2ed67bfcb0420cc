// Bootstrap tokens as data: the Secret orch server writes, and which Secrets
// a token authenticates against (upstream's bootstrap token authenticator
// rules), on both naming profiles.

import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import { authenticateBootstrapToken, BOOTSTRAP_TOKEN_PATTERN, bootstrapTokenSecret, generateBootstrapToken } from "./bootstrap-tokens.js";

const orch = namingFor();
const upstream = namingFor("k8s.io");
const now = Date.parse("2026-01-01T00:00:00Z");
const b64 = (v: string) => Buffer.from(v).toString("base64");

test("a generated token is <6>.<16> of [a-z0-9]; its Secret carries upstream's fields under the naming table", () => {
  const token = generateBootstrapToken();
  assert.match(token, BOOTSTRAP_TOKEN_PATTERN);
  const s = bootstrapTokenSecret(upstream, "abcdef.0123456789abcdef", { now: new Date(now), ttlMs: 3600_000, description: "join", extraGroups: ["system:bootstrappers:workers"] });
  assert.equal(s.metadata.name, "bootstrap-token-abcdef");
  assert.equal(s.metadata.namespace, "kube-system");
  assert.equal(s.type, "bootstrap.kubernetes.io/token");
  const data = Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));
  assert.deepEqual(data, {
    "token-id": "abcdef", "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true", description: "join",
    expiration: "2026-01-01T01:00:00Z", "auth-extra-groups": "system:bootstrappers:workers",
  });
  assert.equal(bootstrapTokenSecret(orch, "abcdef.0123456789abcdef", { now: new Date(now), ttlMs: 0, description: "" }).data["expiration"], undefined, "0: no expiration");
  assert.equal(bootstrapTokenSecret(orch, "abcdef.0123456789abcdef", { now: new Date(now), ttlMs: 0, description: "" }).type, "bootstrap.orch.io/token");
  assert.throws(() => bootstrapTokenSecret(orch, "ABCDEF.0123456789abcdef", { now: new Date(now), ttlMs: 0, description: "" }), /a bootstrap token is/);
});

test("which Secrets a token authenticates against", () => {
  const token = "abcdef.0123456789abcdef";
  const good = bootstrapTokenSecret(orch, token, { now: new Date(now), ttlMs: 3600_000, description: "", extraGroups: ["system:bootstrappers:workers"] });
  assert.deepEqual(authenticateBootstrapToken(orch, token, good, now + 1000), { name: "system:bootstrap:abcdef", groups: ["system:bootstrappers", "system:bootstrappers:workers"] });
  const variants: [string, object | undefined, number][] = [
    ["no Secret", undefined, now],
    ["expired", good, now + 3600_000],
    ["another profile's type", { ...good, type: "bootstrap.kubernetes.io/token" }, now],
    ["being deleted", { ...good, metadata: { ...good.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } }, now],
    ["not for authentication", { ...good, data: { ...good.data, "usage-bootstrap-authentication": b64("false") } }, now],
    ["a malformed expiration", { ...good, data: { ...good.data, expiration: b64("tomorrow") } }, now],
    ["an extra group outside system:bootstrappers:", { ...good, data: { ...good.data, "auth-extra-groups": b64("system:masters") } }, now],
    ["another id in the Secret", { ...good, data: { ...good.data, "token-id": b64("zzzzzz") } }, now],
  ];
  for (const [what, secret, at] of variants) assert.equal(authenticateBootstrapToken(orch, token, secret as never, at), undefined, what);
  assert.equal(authenticateBootstrapToken(orch, "abcdef.0123456789abcdee", good, now), undefined, "another secret");
  assert.equal(authenticateBootstrapToken(orch, "abcdef0123456789abcdef", good, now), undefined, "not a bootstrap token");
});
