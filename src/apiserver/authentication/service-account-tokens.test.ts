// Service-account tokens against a real server and store, as clients meet
// them: TokenRequest (claims, lifetime bounds, bound pods and secrets, the
// maximum, a Protobuf body), the tokens as bearer credentials under RBAC
// (401 once the account or bound pod is gone or replaced), TokenReview with
// audiences, and the ServiceAccount admission step.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { builtinModules } from "../../api/index.js";
import { namingFor } from "../../machinery/naming.js";
import { encodeEnvelope } from "../../machinery/codec/protobuf/index.js";
import { ApiRegistry } from "../api-registry.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { DEFAULT_SERVICE_ACCOUNT_ISSUER } from "./service-account-options.js";
import { TOKEN_REQUEST_TYPE } from "../../api/authentication/token-request.js";

const NS = "/api/v1/namespaces/default";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function create(t: TestServer, path: string, body: object): Promise<any> {
  const r = await t.request("POST", path, { body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

async function token(t: TestServer, account: string, spec: object = {}): Promise<{ status: number; json: any; text: string }> {
  return t.request("POST", `${NS}/serviceaccounts/${account}/token`, { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec } });
}

function pod(name: string, serviceAccountName?: string, extra: object = {}): object {
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { ...(serviceAccountName ? { serviceAccountName } : {}), containers: [{ name: "c", image: "busybox" }], ...extra } };
}

describe("serviceaccounts/token and service-account bearer tokens", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), serviceAccounts: { maxExpirationSeconds: 7200 } });
    await create(t, `${NS}/serviceaccounts`, { metadata: { name: "robot" } });
  });
  after(() => t.close());

  test("a TokenRequest answers a JWT with upstream's claims, signed ES256 by the data folder's key", async () => {
    const r = await token(t, "robot");
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.kind, "TokenRequest");
    assert.equal(r.json.apiVersion, "authentication.k8s.io/v1");
    assert.deepEqual(r.json.spec.audiences, [DEFAULT_SERVICE_ACCOUNT_ISSUER]);
    assert.equal(r.json.spec.expirationSeconds, 3600);
    const claims = decodeJwt(r.json.status.token);
    const account = (await t.request("GET", `${NS}/serviceaccounts/robot`)).json;
    assert.equal(claims.iss, DEFAULT_SERVICE_ACCOUNT_ISSUER);
    assert.equal(claims.sub, "system:serviceaccount:default:robot");
    assert.deepEqual(claims.aud, [DEFAULT_SERVICE_ACCOUNT_ISSUER]);
    assert.equal(claims.exp! - claims.iat!, 3600);
    assert.equal(claims.nbf, claims.iat);
    assert.deepEqual(claims["orch.io"], { namespace: "default", serviceaccount: { name: "robot", uid: account.metadata.uid } });
    assert.equal(Date.parse(r.json.status.expirationTimestamp) / 1000, claims.exp);
    const header = decodeProtectedHeader(r.json.status.token);
    assert.equal(header.alg, "ES256");
    assert.match(header.kid ?? "", /^[A-Za-z0-9_-]{43}$/);
  });

  test("expirationSeconds: under 10 minutes is a 422 with upstream's message; above the maximum it is cut to it", async () => {
    const short = await token(t, "robot", { expirationSeconds: 599 });
    assert.equal(short.status, 422, short.text);
    assert.equal(short.json.reason, "Invalid");
    assert.match(short.json.message, /spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes/);
    const long = await token(t, "robot", { expirationSeconds: 100_000 });
    assert.equal(long.status, 201, long.text);
    assert.equal(long.json.spec.expirationSeconds, 7200);
    const claims = decodeJwt(long.json.status.token);
    assert.equal(claims.exp! - claims.iat!, 7200);
  });

  test("a missing account is a 404; a body of another kind is a 400; GET is a 405", async () => {
    const missing = await token(t, "nobody");
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.json.message, 'serviceaccounts "nobody" not found');
    const wrong = await t.request("POST", `${NS}/serviceaccounts/robot/token`, { body: { kind: "Pod", apiVersion: "v1" } });
    assert.equal(wrong.status, 400, wrong.text);
    const get = await t.request("GET", `${NS}/serviceaccounts/robot/token`);
    assert.equal(get.status, 405, get.text);
  });

  test("boundObjectRef: a pod of the account (claims name it), another account's pod (400), a wrong uid (409), a Node (400)", async () => {
    const p = await create(t, `${NS}/pods`, pod("bound", "robot"));
    const r = await token(t, "robot", { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "bound", uid: p.metadata.uid } });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual((decodeJwt(r.json.status.token)["orch.io"] as any).pod, { name: "bound", uid: p.metadata.uid });

    await create(t, `${NS}/pods`, pod("other", "default-less"));
    const other = await token(t, "robot", { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "other" } });
    assert.equal(other.status, 400, other.text);
    assert.equal(other.json.message, 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.');

    const uid = await token(t, "robot", { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "bound", uid: "not-its-uid" } });
    assert.equal(uid.status, 409, uid.text);
    assert.match(uid.json.message, /the UID in the bound object reference \(not-its-uid\) does not match the UID in record/);

    const node = await token(t, "robot", { boundObjectRef: { kind: "Node", apiVersion: "v1", name: "n1" } });
    assert.equal(node.status, 400, node.text);
    assert.equal(node.json.message, "cannot bind token to object of type /v1, Kind=Node");

    const gone = await token(t, "robot", { boundObjectRef: { kind: "Secret", apiVersion: "v1", name: "absent" } });
    assert.equal(gone.status, 404, gone.text);
  });

  test("a Protobuf TokenRequest (what kubectl create token sends) is read", async () => {
    const registry = new ApiRegistry(builtinModules(), namingFor());
    const body = Buffer.from(encodeEnvelope({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", metadata: {}, spec: { audiences: ["aud-1"], expirationSeconds: 1200 } }, TOKEN_REQUEST_TYPE, registry.schemas));
    const r = await t.request("POST", `${NS}/serviceaccounts/robot/token`, { rawBody: body, headers: { "content-type": "application/vnd.kubernetes.protobuf", "content-length": String(body.length) } });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.spec.audiences, ["aud-1"]);
    const claims = decodeJwt(r.json.status.token);
    assert.deepEqual(claims.aud, ["aud-1"]);
    assert.equal(claims.exp! - claims.iat!, 1200);
  });

  test("the token authenticates as the account: RBAC's 403 names it, a RoleBinding lets it list; whoami shows its groups", async () => {
    const jwt = (await token(t, "robot")).json.status.token as string;
    const denied = await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) });
    assert.equal(denied.status, 403, denied.text);
    assert.match(denied.json.message, /User "system:serviceaccount:default:robot" cannot list resource "configmaps" in API group "" in the namespace "default"/);
    await create(t, "/apis/rbac.authorization.orch.io/v1/namespaces/default/rolebindings", {
      metadata: { name: "robot-view" },
      roleRef: { apiGroup: "rbac.authorization.orch.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "robot", namespace: "default" }],
    });
    let allowed = await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) });
    for (let i = 0; i < 50 && allowed.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      allowed = await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) });
    }
    assert.equal(allowed.status, 200, allowed.text);
    const secrets = await t.request("GET", `${NS}/secrets`, { headers: bearer(jwt) });
    assert.equal(secrets.status, 403, secrets.text);
    const whoami = await t.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", { headers: bearer(jwt), body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } });
    assert.equal(whoami.status, 201, whoami.text);
    const account = (await t.request("GET", `${NS}/serviceaccounts/robot`)).json;
    assert.deepEqual(whoami.json.status.userInfo, {
      username: "system:serviceaccount:default:robot",
      uid: account.metadata.uid,
      groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    });
  });

  test("a pod-bound token carries the pod in the user's extra and dies with the pod", async () => {
    const p = await create(t, `${NS}/pods`, pod("short-lived", "robot"));
    const jwt = (await token(t, "robot", { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "short-lived" } })).json.status.token as string;
    const whoami = await t.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", { headers: bearer(jwt), body: {} });
    assert.equal(whoami.status, 201, whoami.text);
    assert.deepEqual(whoami.json.status.userInfo.extra, { "authentication.orch.io/pod-name": ["short-lived"], "authentication.orch.io/pod-uid": [p.metadata.uid] });
    const del = await t.request("DELETE", `${NS}/pods/short-lived?gracePeriodSeconds=0`);
    assert.ok(del.status === 200 || del.status === 202, del.text);
    const after = await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) });
    assert.equal(after.status, 401, after.text);
  });

  test("deleting the account, or replacing it (a new uid), ends its tokens (401)", async () => {
    await create(t, `${NS}/serviceaccounts`, { metadata: { name: "temp" } });
    const jwt = (await token(t, "temp")).json.status.token as string;
    assert.equal((await t.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", { headers: bearer(jwt), body: {} })).status, 201);
    assert.equal((await t.request("DELETE", `${NS}/serviceaccounts/temp`)).status, 200);
    assert.equal((await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) })).status, 401);
    await create(t, `${NS}/serviceaccounts`, { metadata: { name: "temp" } });
    const replaced = await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) });
    assert.equal(replaced.status, 401, replaced.text);
    assert.equal(replaced.json.reason, "Unauthorized");
  });

  test("a token for another audience is refused as a credential; TokenReview honours spec.audiences", async () => {
    const jwt = (await token(t, "robot", { audiences: ["vault"] })).json.status.token as string;
    assert.equal((await t.request("GET", `${NS}/configmaps`, { headers: bearer(jwt) })).status, 401);
    const review = (audiences?: string[]) =>
      t.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token: jwt, ...(audiences ? { audiences } : {}) } } });
    const forVault = await review(["vault"]);
    assert.equal(forVault.status, 201, forVault.text);
    assert.equal(forVault.json.status.authenticated, true);
    assert.deepEqual(forVault.json.status.audiences, ["vault"]);
    assert.equal(forVault.json.status.user.username, "system:serviceaccount:default:robot");
    const forApi = await review();
    assert.equal(forApi.json.status.authenticated, false);
    assert.equal(forApi.json.status.error, 'token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]');
    // A static token is good for the API audiences only.
    const admin = await t.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", { body: { spec: { token: t.server.credentials.adminToken, audiences: ["vault"] } } });
    assert.equal(admin.json.status.authenticated, false);
    const adminApi = await t.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", { body: { spec: { token: t.server.credentials.adminToken } } });
    assert.equal(adminApi.json.status.authenticated, true);
    assert.deepEqual(adminApi.json.status.audiences, [DEFAULT_SERVICE_ACCOUNT_ISSUER]);
  });

  test("Protobuf TokenReview and SelfSubjectReview (what client-go, the conformance suite and kubectl whoami send) are answered; a garbled one is a 400", async () => {
    const jwt = (await token(t, "robot")).json.status.token as string;
    const registry = new ApiRegistry(builtinModules(), namingFor());
    const pb = (spec: object) => Buffer.from(encodeEnvelope({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", metadata: {}, spec }, "io.k8s.api.authentication.v1.TokenReview", registry.schemas));
    const post = (body: Buffer) =>
      t.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", { rawBody: body, headers: { "content-type": "application/vnd.kubernetes.protobuf", "content-length": String(body.length) } });
    const review = await post(pb({ token: jwt }));
    assert.equal(review.status, 201, review.text);
    assert.equal(review.json.status.authenticated, true);
    assert.equal(review.json.status.user.username, "system:serviceaccount:default:robot");
    const stranger = await post(pb({ token: "not-a-token" }));
    assert.equal(stranger.json.status.authenticated, false);
    const whoamiBody = Buffer.from(encodeEnvelope({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview", metadata: {} }, "io.k8s.api.authentication.v1.SelfSubjectReview", registry.schemas));
    const whoami = await t.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", { rawBody: whoamiBody, headers: { ...bearer(jwt), "content-type": "application/vnd.kubernetes.protobuf", "content-length": String(whoamiBody.length) } });
    assert.equal(whoami.status, 201, whoami.text);
    assert.equal(whoami.json.status.userInfo.username, "system:serviceaccount:default:robot");
    const garbled = await post(Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), Buffer.from([0x0a, 0xff, 0xff, 0xff])]));
    assert.equal(garbled.status, 400, garbled.text);
    assert.match(garbled.json.message, /unknown format/);
  });

  test("a tampered token and a token of another issuer are 401", async () => {
    const jwt = (await token(t, "robot")).json.status.token as string;
    const [h, p, s] = jwt.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: "system:serviceaccount:default:admin" })).toString("base64url")}.${s}`;
    assert.equal((await t.request("GET", `${NS}/configmaps`, { headers: bearer(forged) })).status, 401);
    const foreign = `${h}.${Buffer.from(JSON.stringify({ ...claims, iss: "https://elsewhere" })).toString("base64url")}.${s}`;
    assert.equal((await t.request("GET", `${NS}/configmaps`, { headers: bearer(foreign) })).status, 401);
  });
});

describe("the ServiceAccount admission step", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), serviceAccounts: { admission: true } });
    await create(t, `${NS}/serviceaccounts`, { metadata: { name: "default" } });
    await create(t, `${NS}/serviceaccounts`, { metadata: { name: "quiet" }, automountServiceAccountToken: false, imagePullSecrets: [{ name: "regcred" }] });
  });
  after(() => t.close());

  test("a pod without an account runs as default and gets the projected token volume in every container", async () => {
    const p = await create(t, `${NS}/pods`, pod("plain", undefined, { initContainers: [{ name: "init", image: "busybox" }] }));
    assert.equal(p.spec.serviceAccountName, "default");
    assert.equal(p.spec.serviceAccount, "default");
    const volume = p.spec.volumes.find((v: any) => v.name.startsWith("orch-api-access-"));
    assert.ok(volume, JSON.stringify(p.spec.volumes));
    assert.match(volume.name, /^orch-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual(volume.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        { configMap: { name: "orch-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
      ],
    });
    for (const c of [...p.spec.containers, ...p.spec.initContainers]) {
      assert.deepEqual(c.volumeMounts, [{ name: volume.name, readOnly: true, mountPath: "/var/run/secrets/orch.io/serviceaccount" }]);
    }
  });

  test("a pod naming a missing account is refused with upstream's message", async () => {
    const r = await t.request("POST", `${NS}/pods`, { body: pod("lost", "ghost") });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.message, 'pods "lost" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');
  });

  test("automountServiceAccountToken: false on the account or the pod keeps the volume out; the account's pull secrets are inherited", async () => {
    const quiet = await create(t, `${NS}/pods`, pod("quiet", "quiet"));
    assert.equal(quiet.spec.volumes, undefined);
    assert.deepEqual(quiet.spec.imagePullSecrets, [{ name: "regcred" }]);
    const optedOut = await create(t, `${NS}/pods`, pod("opted-out", undefined, { automountServiceAccountToken: false }));
    assert.equal(optedOut.spec.volumes, undefined);
    const optedIn = await create(t, `${NS}/pods`, pod("opted-in", "quiet", { automountServiceAccountToken: true }));
    assert.equal(optedIn.spec.volumes.length, 1);
  });

  test("a container that mounts something at the token path keeps it", async () => {
    const p = await create(t, `${NS}/pods`, pod("own-mount", undefined, {
      volumes: [{ name: "mine", emptyDir: {} }],
      containers: [{ name: "c", image: "busybox", volumeMounts: [{ name: "mine", mountPath: "/var/run/secrets/orch.io/serviceaccount" }] }],
    }));
    assert.deepEqual(p.spec.volumes.map((v: any) => v.name), ["mine"]);
    assert.deepEqual(p.spec.containers[0].volumeMounts, [{ name: "mine", mountPath: "/var/run/secrets/orch.io/serviceaccount" }]);
  });
});

describe("service-account names per profile", () => {
  test("the orch.io profile's and upstream's (--api-group-suffix=k8s.io)", async () => {
    const { serviceAccountNames } = await import("../../api/authentication/token-request.js");
    assert.deepEqual(serviceAccountNames(namingFor()), {
      claim: "orch.io",
      mountPath: "/var/run/secrets/orch.io/serviceaccount",
      volumePrefix: "orch-api-access-",
      rootCaConfigMap: "orch-root-ca.crt",
      podNameExtra: "authentication.orch.io/pod-name",
      podUidExtra: "authentication.orch.io/pod-uid",
      staleTokenAnnotation: "authentication.orch.io/stale-token",
    });
    assert.deepEqual(serviceAccountNames(namingFor("k8s.io")), {
      claim: "kubernetes.io",
      mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
      volumePrefix: "kube-api-access-",
      rootCaConfigMap: "kube-root-ca.crt",
      podNameExtra: "authentication.kubernetes.io/pod-name",
      podUidExtra: "authentication.kubernetes.io/pod-uid",
      staleTokenAnnotation: "authentication.k8s.io/stale-token",
    });
  });
});

describe("--service-account-extend-token-expiration", () => {
  const YEAR = 24 * 365 * 3600;
  for (const extend of [true, false]) {
    test(`${extend ? "on (the default)" : "off"}: a pod-bound request for 3607 s is ${extend ? "signed for a year with warnafter at 3607 s" : "signed for 3607 s"}; others as asked`, async () => {
      const t = await startTestServer({ modules: builtinModules(), serviceAccounts: { maxExpirationSeconds: 7200, ...(extend ? {} : { extendExpiration: false }) } });
      try {
        await create(t, `${NS}/serviceaccounts`, { metadata: { name: "robot" } });
        const p = await create(t, `${NS}/pods`, pod("web", "robot"));
        const bound = { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "web", uid: p.metadata.uid } };
        const r = await token(t, "robot", { ...bound, expirationSeconds: 3607 });
        assert.equal(r.status, 201, r.text);
        const claims = decodeJwt(r.json.status.token);
        const own = claims["orch.io"] as { warnafter?: number };
        // The answer reports what was asked: the node agent renews on that clock.
        assert.equal(r.json.spec.expirationSeconds, 3607);
        assert.equal(Date.parse(r.json.status.expirationTimestamp) / 1000, claims.iat! + 3607);
        if (extend) {
          assert.equal(claims.exp! - claims.iat!, YEAR, "a year, past --service-account-max-token-expiration");
          assert.equal(own.warnafter, claims.iat! + 3607);
        } else {
          assert.equal(claims.exp! - claims.iat!, 3607);
          assert.equal(own.warnafter, undefined);
        }
        // Not pod-bound, or another lifetime: as asked, no warnafter.
        for (const spec of [{ expirationSeconds: 3607 }, { ...bound, expirationSeconds: 3600 }, { ...bound, expirationSeconds: 7000 }]) {
          const other = await token(t, "robot", spec);
          assert.equal(other.status, 201, other.text);
          const c = decodeJwt(other.json.status.token);
          assert.equal(c.exp! - c.iat!, spec.expirationSeconds, JSON.stringify(spec));
          assert.equal((c["orch.io"] as { warnafter?: number }).warnafter, undefined);
        }
      } finally {
        await t.close();
      }
    });
  }

  test("an extended token used past warnafter still authenticates, and the request's audit event is annotated stale-token", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { loadServiceAccountKeys } = await import("./service-account-keys.js");
    const { ServiceAccountTokens } = await import("./service-account-tokens.js");
    const { auditAnnotationsOf } = await import("../audit/index.js");
    const { serviceAccountNames } = await import("../../api/authentication/token-request.js");
    let nowMs = Date.UTC(2026, 0, 1);
    const objects = { get: async (resource: string, _ns: string, name: string) => ({ apiVersion: "v1", kind: "Object", metadata: { name, uid: `${resource}-uid` } }) };
    const tokens = new ServiceAccountTokens({
      keys: loadServiceAccountKeys({ dataDir: mkdtempSync(join(tmpdir(), "orch-sa-keys-")) }),
      issuers: ["https://issuer"], apiAudiences: ["https://issuer"], maxExpirationSeconds: 0,
      names: serviceAccountNames(namingFor()), objects, now: () => nowMs,
    });
    const jwt = await tokens.issue({
      namespace: "ns", serviceAccount: { name: "robot", uid: "serviceaccounts-uid" }, pod: { name: "web", uid: "pods-uid" },
      audiences: ["https://issuer"], expirationSeconds: YEAR, warnAfterSeconds: 3607,
    });
    const auth = tokens.authenticator();
    const fresh = { headers: { authorization: `Bearer ${jwt}` } } as never;
    assert.equal((await auth.authenticate(fresh))?.name, "system:serviceaccount:ns:robot");
    assert.equal(auditAnnotationsOf(fresh), undefined, "within the hour: no annotation");
    nowMs += 4000 * 1000;
    const late = { headers: { authorization: `Bearer ${jwt}` } } as never;
    assert.equal((await auth.authenticate(late))?.name, "system:serviceaccount:ns:robot");
    assert.deepEqual(auditAnnotationsOf(late), { "authentication.orch.io/stale-token": "subject: system:serviceaccount:ns:robot, seconds after warning threshold: 393" });
    nowMs += (YEAR - 3000) * 1000;
    const expired = await tokens.check(jwt);
    assert.deepEqual(expired, { error: "service account token has expired" });
  });
});
