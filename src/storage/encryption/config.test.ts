// EncryptionConfiguration rules: which resources a rule names (wildcards as
// upstream), the first naming rule decides, and provider order is the
// read order (identity first reads sealed and plain values alike).

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { parseEncryptionConfig } from "./config.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
const aescbc = (name: string) => ({ aescbc: { keys: [{ name, secret: randomBytes(32).toString("base64") }] } });

function config(resources: { resources: string[]; providers: unknown[] }[]) {
  return parseEncryptionConfig(JSON.stringify({ apiVersion: "apiserver.config.orch.io/v1", kind: "EncryptionConfiguration", resources }), "orch.io");
}

test("resource names: exact, *.group, *. for the core group, *.* for all; the first rule naming a resource decides", () => {
  const c = config([
    { resources: ["secrets", "deployments.apps"], providers: [aescbc("exact")] },
    { resources: ["*.batch"], providers: [aescbc("batch")] },
    { resources: ["*."], providers: [aescbc("core")] },
    { resources: ["*.*"], providers: [{ identity: {} }] },
  ]);
  const writes = (group: string, resource: string) => dec.decode(c.transformersFor(group, resource)!.seal(enc.encode("{}"), "/k")).split(":").slice(0, 5).join(":");
  assert.equal(writes("", "secrets"), "k8s:enc:aescbc:v1:exact");
  assert.equal(writes("apps", "deployments"), "k8s:enc:aescbc:v1:exact");
  assert.equal(writes("batch", "jobs"), "k8s:enc:aescbc:v1:batch");
  assert.equal(writes("", "configmaps"), "k8s:enc:aescbc:v1:core");
  assert.equal(writes("apps", "statefulsets"), "{}", "*.* with identity");
  assert.equal(config([{ resources: ["secrets"], providers: [{ identity: {} }] }]).transformersFor("", "configmaps"), undefined, "unnamed resources are not transformed");
});

test("providers in order: the first seals, each opens what carries its prefix; identity first still opens sealed values", () => {
  const key = aescbc("k1");
  const sealed = config([{ resources: ["secrets"], providers: [key] }]).transformersFor("", "secrets")!.seal(enc.encode("plain"), "/k");
  const both = config([{ resources: ["secrets"], providers: [{ identity: {} }, key] }]).transformersFor("", "secrets")!;
  assert.deepEqual(dec.decode(both.open(sealed, "/k").value), "plain");
  assert.equal(both.open(sealed, "/k").stale, true, "read with the second provider: a rewrite re-seals it");
  assert.equal(both.open(enc.encode("plain"), "/k").stale, false);
  const other = config([{ resources: ["secrets"], providers: [aescbc("k2")] }]).transformersFor("", "secrets")!;
  assert.throws(() => other.open(sealed, "/k"), /no matching prefix found/);
  assert.throws(() => other.open(enc.encode("plain"), "/k"), /no matching prefix found/, "without identity, plain values do not read");
});

test("malformed configurations name the field and the problem", () => {
  const cases: [unknown, RegExp][] = [
    [{ resources: ["*"], providers: [{ identity: {} }] }, /resources\[0\]\.resources\[0\]: Invalid value: "\*": use '\*\.' to encrypt all the resources from core API group or \*\.\* to encrypt all resources/],
    [{ resources: ["Secrets"], providers: [{ identity: {} }] }, /must be lowercase/],
    [{ resources: ["secrets"], providers: [] }, /resources\[0\]\.providers: Required value/],
    [{ resources: ["secrets"], providers: [{ identity: {}, ...aescbc("k") }] }, /more than one provider specified in a single element/],
    [{ resources: ["secrets"], providers: [{ aescbc: { keys: [] } }] }, /aescbc\.keys: Required value: at least one keys is required/],
    [{ resources: ["secrets"], providers: [{ secretbox: { keys: [{ name: "k", secret: randomBytes(16).toString("base64") }] } }] }, /secret is not of the expected length, got 16, expected one of \[32\]/],
    [{ resources: ["secrets"], providers: [{ aesgcm: { keys: [{ name: "k", secret: "not base64!" }] } }] }, /secrets must be base64 encoded/],
    [{ resources: ["secrets"], providers: [{ aesgcm: { keys: [{ secret: randomBytes(16).toString("base64") }] } }] }, /keys\[0\]\.name: Required value: name is a mandatory field for a key/],
    [{ resources: ["secrets"], providers: [{ kms: { name: "x" } }] }, /KMS providers are not supported/],
  ];
  for (const [rule, message] of cases) assert.throws(() => config([rule as never]), message);
  assert.throws(() => config([{ resources: ["*.apps"], providers: [{ identity: {} }] }, { resources: ["deployments.apps"], providers: [{ identity: {} }] }]), /"deployments\.apps" is masked by earlier rule "\*\.apps"/);
  assert.throws(() => parseEncryptionConfig("kind: EncryptionConfiguration\napiVersion: apiserver.config.example.com/v1\nresources: []\n", "orch.io"), /supported values: "apiserver\.config\.k8s\.io\/v1", "apiserver\.config\.orch\.io\/v1"/);
});
