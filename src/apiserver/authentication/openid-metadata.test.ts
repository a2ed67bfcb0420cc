// Service-account issuer discovery against a real server and store: the OIDC
// discovery document and the JWKS as upstream serves them (content types,
// cache header, members), a TokenRequest token verified by a third-party
// verifier (jose) with nothing but the published keys, who may read them
// (the bootstrap role bound to every service account; no credentials: 401),
// --service-account-jwks-uri, and an issuer that is not https (no endpoints).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync, mkdtempSync } from "node:fs";
import { get as httpsGet } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { checkJwksUri, issuerProblem } from "./openid-metadata.js";
import { DEFAULT_SERVICE_ACCOUNT_ISSUER } from "./service-account-options.js";

const NS = "/api/v1/namespaces/default";

/** A request without credentials (the harness sends the admin token). */
function anonymousGet(t: TestServer, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsGet({ host: "127.0.0.1", port: t.server.port, path, ca: t.server.credentials.caCertPem }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
  });
}

describe("service-account issuer discovery", () => {
  let t: TestServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-oidc-test-"));
    // A second verifying key (RSA) beside the default ES256 signing key.
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(join(dir, "verify.pem"), rsa.publicKey.export({ type: "spki", format: "pem" }));
    t = await startTestServer({ modules: builtinModules(), serviceAccounts: { keyFiles: [join(dir, "verify.pem")] } });
    const r = await t.request("POST", `${NS}/serviceaccounts`, { body: { metadata: { name: "robot" } } });
    assert.equal(r.status, 201, r.text);
  });
  after(() => t.close());

  test("/.well-known/openid-configuration is upstream's document, JSON, cached an hour", async () => {
    const r = await t.request("GET", "/.well-known/openid-configuration");
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers["content-type"], "application/json");
    assert.equal(r.headers["cache-control"], "public, max-age=3600");
    assert.deepEqual(r.json, {
      issuer: DEFAULT_SERVICE_ACCOUNT_ISSUER,
      jwks_uri: `https://127.0.0.1:${t.server.port}/openid/v1/jwks`,
      response_types_supported: ["id_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256", "RS256"],
    });
  });

  test("/openid/v1/jwks lists every verifying key with its kid; a token verifies with those keys alone", async () => {
    const r = await t.request("GET", "/openid/v1/jwks");
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers["content-type"], "application/jwk-set+json");
    assert.equal(r.headers["cache-control"], "public, max-age=3600");
    const keys = r.json.keys as any[];
    assert.deepEqual(keys.map((k) => [k.kty, k.alg, k.use]).sort(), [["EC", "ES256", "sig"], ["RSA", "RS256", "sig"]]);
    for (const k of keys) {
      assert.match(k.kid, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(k.d, undefined, "no private part");
    }
    const ec = keys.find((k) => k.kty === "EC");
    assert.equal(ec.crv, "P-256");
    const tr = await t.request("POST", `${NS}/serviceaccounts/robot/token`, { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences: ["oidc-discovery-test"] } } });
    assert.equal(tr.status, 201, tr.text);
    const token = tr.json.status.token as string;
    assert.equal(decodeProtectedHeader(token).kid, ec.kid);
    const { payload } = await jwtVerify(token, createLocalJWKSet(r.json), { issuer: DEFAULT_SERVICE_ACCOUNT_ISSUER, audience: "oidc-discovery-test", algorithms: ["RS256", "ES256"] });
    assert.equal(payload.sub, "system:serviceaccount:default:robot");
  });

  test("every service account may read both (bootstrap role and binding); no credentials, no documents", async () => {
    const role = await t.request("GET", "/apis/rbac.authorization.orch.io/v1/clusterroles/system:service-account-issuer-discovery");
    assert.equal(role.status, 200, role.text);
    assert.deepEqual(role.json.rules, [{ verbs: ["get"], nonResourceURLs: ["/.well-known/openid-configuration", "/openid/v1/jwks"] }]);
    const binding = await t.request("GET", "/apis/rbac.authorization.orch.io/v1/clusterrolebindings/system:service-account-issuer-discovery");
    assert.equal(binding.status, 200, binding.text);
    assert.deepEqual(binding.json.subjects, [{ kind: "Group", apiGroup: "rbac.authorization.orch.io", name: "system:serviceaccounts" }]);
    const tr = await t.request("POST", `${NS}/serviceaccounts/robot/token`, { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} } });
    const asRobot = { authorization: `Bearer ${tr.json.status.token}` };
    for (const path of ["/.well-known/openid-configuration", "/openid/v1/jwks"]) {
      const r = await t.request("GET", path, { headers: asRobot });
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      const anon = await anonymousGet(t, path);
      // Not a public path: without credentials orch answers 401 (filters/authentication.ts).
      assert.equal(anon.status, 401, `${path}: ${anon.text}`);
    }
  });

  test("methods other than GET answer 405, as upstream's route", async () => {
    const r = await t.request("POST", "/openid/v1/jwks", { body: {} });
    assert.equal(r.status, 405, r.text);
    const head = await t.request("HEAD", "/.well-known/openid-configuration");
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });
});

test("--service-account-jwks-uri replaces the derived jwks_uri; an http issuer serves no discovery (404)", async () => {
  const t = await startTestServer({ modules: builtinModules(), serviceAccounts: { jwksUri: "https://keys.example.com/jwks" } });
  try {
    const r = await t.request("GET", "/.well-known/openid-configuration");
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.jwks_uri, "https://keys.example.com/jwks");
  } finally {
    await t.close();
  }
  const plain = await startTestServer({ modules: builtinModules(), serviceAccounts: { issuers: ["http://issuer.example.com"] } });
  try {
    assert.equal((await plain.request("GET", "/.well-known/openid-configuration")).status, 404);
    assert.equal((await plain.request("GET", "/openid/v1/jwks")).status, 404);
  } finally {
    await plain.close();
  }
});

test("upstream's checks of the issuer and of --service-account-jwks-uri", () => {
  assert.equal(issuerProblem("https://kubernetes.default.svc"), undefined);
  assert.equal(issuerProblem("http://x"), "issuer URL must use https scheme, got: http://x");
  assert.equal(issuerProblem("https://x?a=b"), "issuer URL may not include a query, got: https://x?a=b");
  assert.equal(issuerProblem("https://x#f"), "issuer URL may not include a fragment, got: https://x#f");
  assert.equal(issuerProblem("kubernetes"), "issuer URL must use https scheme, got: kubernetes");
  assert.equal(checkJwksUri(""), undefined);
  assert.equal(checkJwksUri("https://a/jwks"), undefined);
  assert.equal(checkJwksUri("http://a/jwks"), "jwksURI requires https scheme, parsed as: http://a/jwks");
});
