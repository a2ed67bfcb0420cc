// Service-account keys and tokens without a server: the key flags (RSA and EC
// signing keys, verifying keys from several PEM blocks, key rotation), the
// issuers, expiry with upstream's leeway and messages, and bad key files.

import { test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeProtectedHeader } from "jose";
import { serviceAccountNames } from "../../api/authentication/token-request.js";
import type { ApiObject } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import { DEFAULT_SIGNING_KEY_FILE, loadServiceAccountKeys, type ServiceAccountKeys } from "./service-account-keys.js";
import { ServiceAccountTokens, type AccountObjects } from "./service-account-tokens.js";

const account: ApiObject = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "robot", namespace: "ns", uid: "sa-uid" } };
const objects: AccountObjects = { get: async (resource, _ns, name) => (resource === "serviceaccounts" && name === "robot" ? account : undefined) };
const claims = { namespace: "ns", serviceAccount: { name: "robot", uid: "sa-uid" }, audiences: ["api"], expirationSeconds: 600 };

function tokens(keys: ServiceAccountKeys, o: { issuers?: string[]; now?: () => number } = {}): ServiceAccountTokens {
  return new ServiceAccountTokens({ keys, issuers: o.issuers ?? ["https://issuer"], apiAudiences: ["api"], maxExpirationSeconds: 0, names: serviceAccountNames(namingFor()), objects, ...(o.now ? { now: o.now } : {}) });
}

function pem(type: "rsa" | "ec"): { privateKey: string; publicKey: string } {
  const pair = type === "rsa" ? generateKeyPairSync("rsa", { modulusLength: 2048 }) : generateKeyPairSync("ec", { namedCurve: "P-384" });
  return { privateKey: pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string, publicKey: pair.publicKey.export({ type: "spki", format: "pem" }) as string };
}

test("the default key is made once in the data folder (0600) and kept", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-sa-keys-"));
  const first = loadServiceAccountKeys({ dataDir: dir });
  const file = join(dir, DEFAULT_SIGNING_KEY_FILE);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(first.signing.alg, "ES256");
  const again = loadServiceAccountKeys({ dataDir: dir });
  assert.equal(again.signing.kid, first.signing.kid);
  assert.match(readFileSync(file, "utf8"), /BEGIN PRIVATE KEY/);
});

test("an RSA signing key signs RS256, a P-384 one ES384; tokens verify and name the key", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-sa-keys-"));
  for (const [type, alg] of [["rsa", "RS256"], ["ec", "ES384"]] as const) {
    const file = join(dir, `${type}.key`);
    writeFileSync(file, pem(type).privateKey);
    const keys = loadServiceAccountKeys({ dataDir: dir, signingKeyFile: file });
    const t = tokens(keys);
    const jwt = await t.issue(claims);
    assert.deepEqual(decodeProtectedHeader(jwt), { alg, kid: keys.signing.kid });
    const checked = await t.check(jwt);
    assert.ok(checked !== undefined && "user" in checked, JSON.stringify(checked));
    assert.equal(checked.user.name, "system:serviceaccount:ns:robot");
  }
});

test("key rotation: the old key in --service-account-key-file (with other PEM blocks) still verifies its tokens; an unknown key does not", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-sa-keys-"));
  const old = pem("ec");
  writeFileSync(join(dir, "old.key"), old.privateKey);
  const oldTokens = tokens(loadServiceAccountKeys({ dataDir: dir, signingKeyFile: join(dir, "old.key") }));
  const jwt = await oldTokens.issue(claims);
  const other = pem("rsa");
  writeFileSync(join(dir, "verify.pem"), `${other.publicKey}\n${old.publicKey}`);
  writeFileSync(join(dir, "new.key"), pem("ec").privateKey);
  const rotated = tokens(loadServiceAccountKeys({ dataDir: dir, signingKeyFile: join(dir, "new.key"), keyFiles: [join(dir, "verify.pem")] }));
  const accepted = await rotated.check(jwt);
  assert.ok(accepted !== undefined && "user" in accepted, JSON.stringify(accepted));
  const stranger = tokens(loadServiceAccountKeys({ dataDir: dir, signingKeyFile: join(dir, "new.key") }));
  const refused = await stranger.check(jwt);
  assert.ok(refused !== undefined && "error" in refused);
});

test("issuers: a token of another issuer is not ours (undefined); every listed issuer is accepted", async () => {
  const keys = loadServiceAccountKeys({ dataDir: mkdtempSync(join(tmpdir(), "orch-sa-keys-")) });
  const jwt = await tokens(keys, { issuers: ["https://old"] }).issue(claims);
  assert.equal(await tokens(keys, { issuers: ["https://new"] }).check(jwt), undefined);
  const both = await tokens(keys, { issuers: ["https://new", "https://old"] }).check(jwt);
  assert.ok(both !== undefined && "user" in both);
  assert.equal(await tokens(keys).check("not-a-jwt"), undefined);
});

test("expiry: valid within a minute's leeway, then upstream's message; not before nbf", async () => {
  const keys = loadServiceAccountKeys({ dataDir: mkdtempSync(join(tmpdir(), "orch-sa-keys-")) });
  let now = 1_000_000_000_000;
  const t = tokens(keys, { now: () => now });
  const jwt = await t.issue(claims);
  now += 600_000 + 30_000;
  assert.ok("user" in (await t.check(jwt))!);
  now += 60_000;
  assert.deepEqual(await t.check(jwt), { error: "service account token has expired" });
  now = 1_000_000_000_000 - 120_000;
  assert.deepEqual(await t.check(jwt), { error: "service account token is not valid yet" });
});

test("bad key files stop the start naming the flag", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-sa-keys-"));
  writeFileSync(join(dir, "junk"), "hello");
  assert.throws(() => loadServiceAccountKeys({ dataDir: dir, signingKeyFile: join(dir, "junk") }), /--service-account-signing-key-file: .*junk: not a PEM private key/);
  assert.throws(() => loadServiceAccountKeys({ dataDir: dir, keyFiles: [join(dir, "junk")] }), /--service-account-key-file: .*junk holds no PEM public key/);
  assert.throws(() => loadServiceAccountKeys({ dataDir: dir, keyFiles: [join(dir, "absent")] }), /--service-account-key-file: cannot read/);
  const ed = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  writeFileSync(join(dir, "ed.key"), ed);
  assert.throws(() => loadServiceAccountKeys({ dataDir: dir, signingKeyFile: join(dir, "ed.key") }), /unsupported key type ed25519/);
});

test("a verified signature is reused for 10 s, never past the token's expiry and leeway; failures and other audiences are checked afresh", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-sa-keys-"));
  const real = loadServiceAccountKeys({ dataDir: dir });
  let verifications = 0;
  // Each uncached verification reads the verifying keys once.
  const keys: ServiceAccountKeys = { signing: real.signing, get verifying() { verifications++; return real.verifying; } };
  let now = 1_700_000_000_000;
  const t = tokens(keys, { now: () => now });
  const jwt = await t.issue({ ...claims, expirationSeconds: 30 });
  const ok = async () => { const c = await t.check(jwt); return c !== undefined && "user" in c; };
  assert.ok(await ok());
  assert.equal(verifications, 1);
  now += 5_000;
  assert.ok(await ok());
  assert.equal(verifications, 1, "within 10 s: the signature is not verified again");
  const other = await t.check(jwt, ["elsewhere"]);
  assert.ok(other !== undefined && "error" in other, "another audience is not served from the cache");
  assert.equal(verifications, 2);
  now += 6_000; // 11 s after the first check
  assert.ok(await ok());
  assert.equal(verifications, 3, "past 10 s: verified again");
  now += 75_000; // 86 s after issue: cached until 11 + 10 s at most
  assert.ok(await ok(), "within exp (30 s) + leeway (60 s)");
  now += 9_000; // 95 s: past 90 s, although the last verification was under 10 s ago
  const late = await t.check(jwt);
  assert.deepEqual(late, { error: "service account token has expired" });
  // The account check still runs on every request: an account gone is seen at once.
  now -= 90_000;
  const gone = new ServiceAccountTokens({ keys, issuers: ["https://issuer"], apiAudiences: ["api"], maxExpirationSeconds: 0, names: serviceAccountNames(namingFor()), objects: { get: async () => undefined }, now: () => now });
  assert.deepEqual(await gone.check(jwt), { error: 'serviceaccounts "robot" not found' });
});
