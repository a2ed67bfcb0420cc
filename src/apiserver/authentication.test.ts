// Authentication as a client meets it, over real TLS against a real server:
// client certificates (CA-signed, foreign, expired), the admin token, a
// --token-auth-file, --anonymous-auth both ways, and impersonation with an
// authorizer that refuses some of it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { connect as http2Connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { parseFeatureGates } from "../component/index.js";
import { ensureCredentials, issueClientCert } from "../component/pki.js";
import { startApiServer, type RunningApiServer } from "./server.js";
import { sampleApi } from "./testing/sample-api.js";
import type { Authorizer, Decision } from "./filters/authorization.js";
import type { UserInfo } from "./filters/context.js";
import type { RequestAttributes } from "./filters/request-info.js";
import { parseTokenFile } from "./filters/token-file.js";

interface Reply { status: number; json: any; text: string }

function call(server: RunningApiServer, path: string, o: { headers?: Record<string, string | string[]>; cert?: { cert: string; key: string }; method?: string; body?: string | Buffer } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port: server.port, ca: server.credentials.caCertPem, path, method: o.method ?? "GET", headers: o.headers ?? {}, ...(o.cert ?? {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try { json = JSON.parse(text); } catch { json = undefined; }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

/** Records who each request ran as; lets `bob` impersonate the user alice and nobody else, and refuses everyone the path /forbidden. */
class RecordingAuthorizer implements Authorizer {
  readonly seen: { user: UserInfo; attrs: RequestAttributes }[] = [];
  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    this.seen.push({ user, attrs });
    if (user.groups.includes("system:masters")) return { decision: "Allow" };
    if (attrs.verb === "impersonate") {
      return user.name === "bob" && attrs.resource === "users" && attrs.name === "alice" ? { decision: "Allow" } : { decision: "NoOpinion" };
    }
    return { decision: "Allow" };
  }
  /** The user the last non-impersonate check ran as. */
  last(): UserInfo {
    return this.seen.filter((s) => s.attrs.verb !== "impersonate").at(-1)!.user;
  }
}

/** A client certificate signed by `ca` whose validity ended yesterday. */
async function expiredClientCert(ca: { cert: string; key: string }, cn: string): Promise<{ cert: string; key: string }> {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const caKey = await webcrypto.subtle.importKey("pkcs8", Buffer.from(ca.key.replace(/-----[^-]+-----|\s/g, ""), "base64"), alg, false, ["sign"]);
  const day = 24 * 3600 * 1000;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "01", subject: `CN=${cn}`, issuer: new x509.X509Certificate(ca.cert).subject,
    notBefore: new Date(Date.now() - 10 * day), notAfter: new Date(Date.now() - day),
    signingAlgorithm: alg, publicKey: keys.publicKey, signingKey: caKey,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  return { cert: cert.toString("pem"), key: `-----BEGIN PRIVATE KEY-----\n${der}\n-----END PRIVATE KEY-----\n` };
}

async function start(dataDir: string, extra: { tokenAuthFile?: string; anonymousAuth?: boolean; authorizers?: Authorizer[] } = {}): Promise<RunningApiServer> {
  return startApiServer({
    dataDir, bindAddress: "127.0.0.1", securePort: 0, storage: { backend: "lmdb" }, compactionIntervalMs: 0,
    featureGates: parseFeatureGates({}), modules: [sampleApi], log: () => {}, ...extra,
  });
}

describe("authentication", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-authn-test-"));
  const dataDir = join(dir, "data");
  const tokenFile = join(dir, "tokens.csv");
  const authz = new RecordingAuthorizer();
  let server: RunningApiServer;
  let ca: { cert: string; key: string };
  before(async () => {
    writeFileSync(tokenFile, 'tok-bob,bob,uid-42,"team-a,team-b"\n\ntok-carol, carol ,uid-7\n');
    server = await start(dataDir, { tokenAuthFile: tokenFile, authorizers: [authz] });
    ca = { cert: readFileSync(join(dataDir, "ca.crt"), "utf8"), key: readFileSync(join(dataDir, "ca.key"), "utf8") };
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a client certificate signed by the cluster CA: user = CN, groups = the O values", async () => {
    const cert = await issueClientCert(ca, "alice", ["system:masters", "team-x"]);
    const r = await call(server, "/api", { cert });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(authz.last(), { name: "alice", groups: ["system:masters", "team-x", "system:authenticated"] });
  });

  test("HTTP/2: each session is its certificate's user on every stream; a bearer token on a stream still wins; a session without one is anonymous", async () => {
    const token = readFileSync(join(dataDir, "admin.token"), "utf8").trim();
    const session = (cert?: { cert: string; key: string }) => http2Connect(`https://127.0.0.1:${server.port}`, { ca: ca.cert, servername: "localhost", ...(cert ?? {}) });
    const get = (s: ReturnType<typeof session>, headers: Record<string, string> = {}) => new Promise<number>((resolve, reject) => {
      const req = s.request({ ":path": "/api", ...headers });
      req.on("response", (h) => resolve(Number(h[":status"])));
      req.on("error", reject);
      req.resume();
      req.end();
    });
    const users: [string, string[]][] = [["dave", ["team-d"]], ["erin", ["team-e"]]];
    const sessions = await Promise.all(users.map(async ([cn, groups]) => session(await issueClientCert(ca, cn, groups))));
    try {
      for (let i = 0; i < 3; i++) {
        for (const [k, [cn, groups]] of users.entries()) {
          assert.equal(await get(sessions[k]!), 200);
          assert.deepEqual(authz.last(), { name: cn, groups: [...groups, "system:authenticated"] }, `stream ${i} of ${cn}'s session`);
        }
      }
      assert.equal(await get(sessions[0]!, { authorization: `Bearer ${token}` }), 200);
      assert.equal(authz.last().name, "admin");
      assert.equal(await get(sessions[0]!), 200);
      assert.equal(authz.last().name, "dave", "the certificate's user again on the next stream");
      const none = session();
      try {
        assert.equal(await get(none), 401);
      } finally {
        none.close();
      }
    } finally {
      for (const s of sessions) s.close();
    }
  });

  test("a certificate from another CA, or an expired one, is a 401", async () => {
    const other = await ensureCredentials(join(dir, "other"));
    const foreign = await issueClientCert({ cert: other.caCertPem, key: readFileSync(join(dir, "other", "ca.key"), "utf8") }, "alice", ["system:masters"]);
    const r1 = await call(server, "/api", { cert: foreign });
    assert.equal(r1.status, 401, r1.text);
    assert.equal(r1.json.message, "Unauthorized");
    const expired = await expiredClientCert(ca, "alice");
    const r2 = await call(server, "/api", { cert: expired });
    assert.equal(r2.status, 401, r2.text);
  });

  test("the admin token still works, and a request with no credential is a 401 off the public paths", async () => {
    const r = await call(server, "/api", { headers: { authorization: `Bearer ${server.credentials.adminToken}` } });
    assert.equal(r.status, 200);
    assert.equal(authz.last().name, "admin");
    assert.equal((await call(server, "/api")).status, 401);
    assert.equal((await call(server, "/api", { headers: { authorization: "Bearer nope" } })).status, 401);
    const h = await call(server, "/healthz");
    assert.equal(h.status, 200);
    assert.equal(authz.last().name, "system:anonymous");
  });

  test("--token-auth-file: its tokens prove their users, uid and groups", async () => {
    assert.equal((await call(server, "/api", { headers: { authorization: "Bearer tok-bob" } })).status, 200);
    assert.deepEqual(authz.last(), { name: "bob", uid: "uid-42", groups: ["team-a", "team-b", "system:authenticated"] });
    assert.equal((await call(server, "/api", { headers: { authorization: "Bearer tok-carol" } })).status, 200);
    assert.deepEqual(authz.last(), { name: "carol ", uid: "uid-7", groups: ["system:authenticated"] });
  });

  test("impersonation: a caller allowed to impersonate runs as the impersonated user, groups and extras", async () => {
    const r = await call(server, "/api", {
      headers: {
        authorization: `Bearer ${server.credentials.adminToken}`,
        "impersonate-user": "alice", "impersonate-group": ["team-x", "team, y"], "impersonate-uid": "u-1", "impersonate-extra-scopes%2Fa": ["one", "two"],
      },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(authz.last(), { name: "alice", uid: "u-1", groups: ["team-x", "team, y", "system:authenticated"], extra: { "scopes/a": ["one", "two"] } });
    const checks = authz.seen.filter((s) => s.attrs.verb === "impersonate").slice(-6).map((s) => `${s.attrs.apiGroup}|${s.attrs.resource}/${s.attrs.subresource}|${s.attrs.name}`);
    assert.deepEqual(checks, ["|users/|alice", "|groups/|team-x", "|groups/|team, y", "authentication.orch.io|userextras/scopes/a|one", "authentication.orch.io|userextras/scopes/a|two", "authentication.orch.io|uids/|u-1"]);
  });

  test("impersonation: a service account gets its fixed groups; system:anonymous gets system:unauthenticated", async () => {
    const admin = { authorization: `Bearer ${server.credentials.adminToken}` };
    assert.equal((await call(server, "/api", { headers: { ...admin, "impersonate-user": "system:serviceaccount:ns1:robot" } })).status, 200);
    assert.deepEqual(authz.last(), { name: "system:serviceaccount:ns1:robot", groups: ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"] });
    const sa = authz.seen.filter((s) => s.attrs.verb === "impersonate").at(-1)!.attrs;
    assert.deepEqual([sa.resource, sa.namespace, sa.name], ["serviceaccounts", "ns1", "robot"]);
    assert.equal((await call(server, "/api", { headers: { ...admin, "impersonate-user": "system:anonymous" } })).status, 200);
    assert.deepEqual(authz.last(), { name: "system:anonymous", groups: ["system:unauthenticated"] });
  });

  test("impersonation refused is a 403 with upstream's text; headers without a user are a 400", async () => {
    const bob = { authorization: "Bearer tok-bob" };
    const ok = await call(server, "/api", { headers: { ...bob, "impersonate-user": "alice" } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(authz.last().name, "alice");
    const user = await call(server, "/api", { headers: { ...bob, "impersonate-user": "carol" } });
    assert.equal(user.status, 403);
    assert.equal(user.json.message, 'users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
    assert.equal(user.json.reason, "Forbidden");
    const group = await call(server, "/api", { headers: { ...bob, "impersonate-user": "alice", "impersonate-group": "system:masters" } });
    assert.equal(group.status, 403);
    assert.equal(group.json.message, 'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope');
    const sa = await call(server, "/api", { headers: { ...bob, "impersonate-user": "system:serviceaccount:ns1:robot" } });
    assert.equal(sa.json.message, 'serviceaccounts "robot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"');
    const extra = await call(server, "/api", { headers: { ...bob, "impersonate-user": "alice", "impersonate-extra-scopes": "x" } });
    assert.equal(extra.json.message, 'userextras.authentication.orch.io "x" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.orch.io" at the cluster scope');
    const noUser = await call(server, "/api", { headers: { ...bob, "impersonate-group": "team-x" } });
    assert.equal(noUser.status, 400);
    assert.match(noUser.json.message, /without impersonating a user/);
  });

  test("SelfSubjectReview: a POST answers the caller's user (after impersonation), under both group spellings, stores nothing", async () => {
    const admin = { authorization: `Bearer ${server.credentials.adminToken}`, "content-type": "application/json" };
    for (const group of ["authentication.orch.io", "authentication.k8s.io"]) {
      const r = await call(server, `/apis/${group}/v1/selfsubjectreviews`, { method: "POST", headers: admin, body: JSON.stringify({ apiVersion: `${group}/v1`, kind: "SelfSubjectReview" }) });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.apiVersion, `${group}/v1`);
      assert.equal(r.json.kind, "SelfSubjectReview");
      assert.match(r.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(r.json.status.userInfo, { username: "admin", groups: ["system:masters", "system:authenticated"] });
    }
    const as = await call(server, "/apis/authentication.k8s.io/v1/selfsubjectreviews", { method: "POST", headers: { ...admin, "impersonate-user": "alice", "impersonate-extra-scope": "s1" }, body: "{}" });
    assert.deepEqual(as.json.status.userInfo, { username: "alice", groups: ["system:authenticated"], extra: { scope: ["s1"] } });
    const bob = await call(server, "/apis/authentication.k8s.io/v1/selfsubjectreviews", { method: "POST", headers: { authorization: "Bearer tok-bob" } });
    assert.deepEqual(bob.json.status.userInfo, { username: "bob", uid: "uid-42", groups: ["team-a", "team-b", "system:authenticated"] });
    const pb = await call(server, "/apis/authentication.k8s.io/v1/selfsubjectreviews", { method: "POST", headers: { ...admin, "content-type": "application/vnd.kubernetes.protobuf" }, body: Buffer.from([0x6b, 0x38, 0x73, 0, 0x0a, 0]) });
    assert.equal(pb.status, 201, pb.text);
  });

  test("SelfSubjectReview: other methods are 405, a wrong body is 400 or 415, unknown versions and named paths 404", async () => {
    const admin = { authorization: `Bearer ${server.credentials.adminToken}` };
    const path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    const get = await call(server, path, { headers: admin });
    assert.equal(get.status, 405);
    assert.equal(get.json.message, 'get is not supported on resources of kind "selfsubjectreviews.authentication.k8s.io"');
    const kind = await call(server, path, { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: '{"kind":"TokenReview"}' });
    assert.equal(kind.status, 400);
    assert.equal(kind.json.message, 'the body is a "TokenReview", not a SelfSubjectReview');
    const version = await call(server, path, { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: '{"apiVersion":"authentication.k8s.io/v1beta1"}' });
    assert.equal(version.status, 400);
    assert.equal((await call(server, path, { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: "[1]" })).status, 400);
    assert.equal((await call(server, path, { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: "{" })).status, 400);
    assert.equal((await call(server, path, { method: "POST", headers: { ...admin, "content-type": "application/vnd.kubernetes.protobuf" }, body: "{}" })).status, 400);
    assert.equal((await call(server, path, { method: "POST", headers: { ...admin, "content-type": "text/plain" }, body: "hi" })).status, 415);
    assert.equal((await call(server, "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews", { method: "POST", headers: admin })).status, 404);
    assert.equal((await call(server, `${path}/x`, { method: "POST", headers: admin })).status, 404);
    assert.equal((await call(server, path, { method: "POST" })).status, 401);
  });
});

describe("TokenReview", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-authn-tr-"));
  let server: RunningApiServer;
  before(async () => {
    writeFileSync(join(dir, "tokens.csv"), 'tok-bob,bob,uid-42,"team-a"\n');
    server = await start(join(dir, "data"), { tokenAuthFile: join(dir, "tokens.csv") });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const review = (body: unknown, contentType = "application/json") => call(server, "/apis/authentication.k8s.io/v1/tokenreviews", {
    method: "POST", headers: { authorization: `Bearer ${server.credentials.adminToken}`, "content-type": contentType }, body: typeof body === "string" ? body : JSON.stringify(body),
  });

  test("a token the server knows (token file, admin) is authenticated with its user; another is not", async () => {
    const bob = await review({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token: "tok-bob" } });
    assert.equal(bob.status, 201, bob.text);
    // Static tokens are good for the API audiences (the issuer, by default) only.
    assert.deepEqual(bob.json.status, { authenticated: true, user: { username: "bob", uid: "uid-42", groups: ["team-a", "system:authenticated"] }, audiences: ["https://kubernetes.default.svc.cluster.local"] });
    assert.equal(bob.json.spec.token, "tok-bob");
    const admin = await review({ spec: { token: server.credentials.adminToken } });
    assert.equal(admin.json.status.user.username, "admin");
    const nobody = await review({ spec: { token: "nope" } });
    assert.equal(nobody.status, 201);
    assert.deepEqual(nobody.json.status, { authenticated: false, user: {} });
    const orch = await call(server, "/apis/authentication.orch.io/v1/tokenreviews", { method: "POST", headers: { authorization: "Bearer tok-bob" }, body: '{"spec":{"token":"tok-bob"}}' });
    assert.equal(orch.json.apiVersion, "authentication.orch.io/v1");
    assert.equal(orch.json.status.authenticated, true);
  });

  test("bad input: no token 400, audiences not a list of strings 400, wrong kind 400, Protobuf 415, GET 405", async () => {
    const none = await review({ spec: {} });
    assert.equal(none.status, 400);
    assert.equal(none.json.message, "token is required for TokenReview in authentication");
    assert.equal((await review("")).status, 400);
    assert.equal((await review({ spec: { token: "tok-bob", audiences: "api" } })).status, 400);
    assert.equal((await review({ spec: { token: "tok-bob", audiences: [1] } })).status, 400);
    const elsewhere = await review({ spec: { token: "tok-bob", audiences: ["api"] } });
    assert.equal(elsewhere.status, 201);
    assert.equal(elsewhere.json.status.authenticated, false, "a static token is not good for another audience");
    assert.equal((await review({ kind: "SelfSubjectReview", spec: { token: "tok-bob" } })).status, 400);
    assert.equal((await review("k8s\u0000", "application/vnd.kubernetes.protobuf")).status, 415);
    assert.equal((await call(server, "/apis/authentication.k8s.io/v1/tokenreviews", { headers: { authorization: `Bearer ${server.credentials.adminToken}` } })).status, 405);
  });
});

describe("--anonymous-auth", () => {
  for (const anonymous of [true, false]) {
    test(`${anonymous}: /healthz without credentials is ${anonymous ? 200 : 401}; /api is 401 either way`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "orch-authn-anon-"));
      const server = await start(dir, { anonymousAuth: anonymous });
      try {
        assert.equal((await call(server, "/healthz")).status, anonymous ? 200 : 401);
        assert.equal((await call(server, "/version")).status, anonymous ? 200 : 401);
        assert.equal((await call(server, "/api")).status, 401);
        assert.equal((await call(server, "/healthz", { headers: { authorization: `Bearer ${server.credentials.adminToken}` } })).status, 200);
      } finally {
        await server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe("--token-auth-file parsing", () => {
  test("columns, quoted groups, optional groups, blank lines", () => {
    const users = parseTokenFile('a,alice,1,"g1,g2"\n\n"b""q",bob,,g3\r\nc,carol,3\n', "f.csv");
    assert.deepEqual(users.get("a"), { name: "alice", uid: "1", groups: ["g1", "g2", "system:authenticated"] });
    assert.deepEqual(users.get('b"q'), { name: "bob", groups: ["g3", "system:authenticated"] });
    assert.deepEqual(users.get("c"), { name: "carol", uid: "3", groups: ["system:authenticated"] });
  });
  test("a malformed line names the file and the line", () => {
    assert.throws(() => parseTokenFile("a,alice,1\nb,bob\n", "f.csv"), { message: "token file 'f.csv', line 2: must have at least 3 columns (token, user name, user uid), found 2" });
    assert.throws(() => parseTokenFile('a,alice,1,"g1,g2\n', "f.csv"), /line 1: extraneous or missing " in quoted-field/);
    assert.throws(() => parseTokenFile('a,al"ice,1\n', "f.csv"), /line 1: bare " in non-quoted-field/);
    assert.throws(() => parseTokenFile(",alice,1\n", "f.csv"), /line 1: empty token/);
    assert.throws(() => parseTokenFile("a,,1\n", "f.csv"), /line 1: empty user name/);
    assert.throws(() => parseTokenFile("a,alice,1\na,bob,2\n", "f.csv"), /line 2: duplicate token/);
  });
  test("the server refuses to start on a malformed file, naming the line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-authn-bad-"));
    try {
      writeFileSync(join(dir, "t.csv"), "ok,alice,1\nbroken\n");
      await assert.rejects(start(join(dir, "data"), { tokenAuthFile: join(dir, "t.csv") }), /line 2: must have at least 3 columns/);
      await assert.rejects(start(join(dir, "data"), { tokenAuthFile: join(dir, "missing.csv") }), /--token-auth-file: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
