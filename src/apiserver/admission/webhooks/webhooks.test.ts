// Admission webhooks end to end against a real API server and real HTTPS
// webhook servers started here (a throwaway CA; the caBundle trusts it).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { builtinModules } from "../../../api/index.js";
import { selfSignedServingCert } from "../../../component/pki.js";
import { startTestServer, upgradeRefusal, type TestResponse, type TestServer } from "../../testing/harness.js";
import { createUntil as createAt, warnings } from "./testing.js";
import { observationsAbove, parseExposition } from "../../../component/metrics/testing.js";
import { cronTabCrd } from "../../crd/testing.js";
import { equivalence } from "./equivalent.js";
import { mutatingWebhooks } from "./index.js";

const GROUP = "admissionregistration.orch.io";
const VWC = `/apis/${GROUP}/v1/validatingwebhookconfigurations`;
const MWC = `/apis/${GROUP}/v1/mutatingwebhookconfigurations`;
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

interface Review {
  request: { uid: string; operation: string; name: string; namespace?: string; dryRun: boolean; object: any; userInfo: { username?: string }; kind: any; resource: any };
}

let t: TestServer;
const createUntil = (ns: string, body: { metadata: { name: string } }, done: (r: TestResponse) => boolean) => createAt(t, CM(ns), body, done);
let hook: Server;
let hookPort = 0;
let caBundle = "";
const seen: { path: string; review: Review }[] = [];

/** Webhook behaviours by path. */
function answer(path: string, review: Review): Record<string, unknown> {
  const uid = review.request.uid;
  const name = review.request.object?.metadata?.name ?? review.request.name;
  // The first path segment names the behaviour; the rest tells tests' calls apart.
  switch (path.split("?")[0]!.replace(/^(\/[^/]*).*$/, "$1")) {
    case "/deny-bad":
      return name.startsWith("bad") ? { uid, allowed: false, status: { code: 403, message: `name ${name} is not allowed` } } : { uid, allowed: true };
    case "/allow-warn":
      return { uid, allowed: true, warnings: ["this is deprecated"], auditAnnotations: { checked: "yes" } };
    case "/label":
      return { uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([{ op: "add", path: "/metadata/labels", value: { ...(review.request.object.metadata.labels ?? {}), mutated: "yes" } }])).toString("base64") };
    case "/require-mutated":
      return review.request.object.metadata.labels?.mutated === "yes" ? { uid, allowed: true } : { uid, allowed: false, status: { message: "not mutated" } };
    case "/count": {
      const count = Number(review.request.object.metadata.annotations?.count ?? "0") + 1;
      return { uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([{ op: "add", path: "/metadata/annotations", value: { ...(review.request.object.metadata.annotations ?? {}), count: String(count) } }])).toString("base64") };
    }
    case "/deny-attach": // agnhost's /pods/attach, used by upstream's conformance spec
      return review.request.object.stdin === true && review.request.object.container === "container1"
        ? { uid, allowed: false, status: { message: "attaching to pod 'to-be-attached-pod' is not allowed" } }
        : { uid, allowed: true };
    case "/add-init": // agnhost's /mutating-pods: an init container with no terminationMessagePolicy
      return review.request.object.spec.initContainers?.length
        ? { uid, allowed: true }
        : { uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([{ op: "add", path: "/spec/initContainers", value: [{ name: "webhook-added-init-container", image: "busybox" }] }])).toString("base64") };
    case "/crontab": // a field the schema does not name (pruned), a defaulted one removed (defaulted again)
      return { uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([{ op: "add", path: "/spec/notInSchema", value: "yes" }, { op: "remove", path: "/spec/replicas" }, { op: "replace", path: "/spec/image", value: "mutated" }])).toString("base64") };
    case "/wrong-uid":
      return { uid: "other", allowed: true };
    default:
      return { uid, allowed: true };
  }
}

before(async () => {
  t = await startTestServer({ modules: builtinModules() });
  const pki = await selfSignedServingCert(["hooks.default.svc"]);
  caBundle = Buffer.from(pki.ca).toString("base64");
  hook = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Review;
      const path = req.url ?? "/";
      seen.push({ path, review });
      const reply = () => {
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: answer(path, review) }));
      };
      if (path.startsWith("/slow")) setTimeout(reply, 3000);
      else if (path.startsWith("/pause")) setTimeout(reply, 700);
      else reply();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  hookPort = (hook.address() as AddressInfo).port;
});
after(async () => {
  hook.closeAllConnections();
  hook.close();
  await t.close();
});

const url = (path: string) => `https://127.0.0.1:${hookPort}${path}`;

function webhook(name: string, path: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    clientConfig: { url: url(path), caBundle },
    rules: [{ operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    ...extra,
  };
}

async function configure(base: string, kind: string, name: string, webhooks: unknown[]): Promise<void> {
  const r = await t.request("POST", base, { body: { apiVersion: `${GROUP}/v1`, kind, metadata: { name }, webhooks } });
  assert.equal(r.status, 201, r.text);
}

async function remove(base: string, name: string): Promise<void> {
  assert.equal((await t.request("DELETE", `${base}/${name}`)).status, 200);
  // The plugins read the watch cache: wait until the configuration is gone from it.
  for (let i = 0; i < 100 && (await t.request("GET", `${base}/${name}`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
}

function configMap(name: string, labels: Record<string, string> = {}) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels }, data: { a: "b" } };
}

test("webhook configurations: upstream's defaults, validation messages and table", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "defaults", [webhook("d.example.com", "/allow", { rules: [{ operations: ["CREATE"], apiGroups: ["x.example.com"], apiVersions: ["v1"], resources: ["things"] }] })]);
  const got = (await t.request("GET", `${VWC}/defaults`)).json;
  const w = got.webhooks[0];
  assert.equal(w.failurePolicy, "Fail");
  assert.equal(w.matchPolicy, "Equivalent");
  assert.equal(w.timeoutSeconds, 10);
  assert.deepEqual(w.namespaceSelector, {});
  assert.deepEqual(w.objectSelector, {});
  assert.equal(w.rules[0].scope, "*");
  assert.equal(w.reinvocationPolicy, undefined);
  await configure(MWC, "MutatingWebhookConfiguration", "mdefaults", [webhook("m.example.com", "/allow", { clientConfig: { service: { namespace: "default", name: "svc" } }, rules: [{ operations: ["CREATE"], apiGroups: ["x.example.com"], apiVersions: ["v1"], resources: ["things"] }] })]);
  const m = (await t.request("GET", `${MWC}/mdefaults`)).json.webhooks[0];
  assert.equal(m.reinvocationPolicy, "Never");
  assert.equal(m.clientConfig.service.port, 443);

  const bad = await t.request("POST", VWC, {
    body: {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "bad" },
      webhooks: [
        { name: "short", clientConfig: { url: "http://x.example.com/" }, rules: [{ operations: ["GET"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }], sideEffects: "Some", timeoutSeconds: 31, admissionReviewVersions: ["v2"] },
        { name: "a.b.c", clientConfig: {}, sideEffects: "None", admissionReviewVersions: ["v1"], namespaceSelector: { matchExpressions: [{ key: "k", operator: "Near" }] } },
        { name: "a.b.c", clientConfig: { service: { name: "s", namespace: "n", port: 70000, path: "x" } }, admissionReviewVersions: [] },
      ],
    },
  });
  assert.equal(bad.status, 422, bad.text);
  const msg: string = bad.json.message;
  for (const part of [
    'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
    "webhooks[0].clientConfig.url: Invalid value: \"http://x.example.com/\": 'https' is the only allowed URL scheme",
    'webhooks[0].rules[0].operations[0]: Unsupported value: "GET": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
    "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
    'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1',
    "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
    'webhooks[1].namespaceSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    'webhooks[2].name: Duplicate value: "a.b.c"',
    "webhooks[2].sideEffects: Required value",
    "webhooks[2].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
    "webhooks[2].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
    "webhooks[2].clientConfig.service.path: Invalid value: \"x\": must start with a '/'",
  ]) assert.ok(msg.includes(part), `missing ${part} in ${msg}`);

  const table = await t.request("GET", VWC, { headers: { Accept: "application/json;as=Table;v=v1;g=meta.orch.io" } });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Webhooks", "Age"]);
  assert.deepEqual(table.json.rows.find((r: { cells: unknown[] }) => r.cells[0] === "defaults").cells.slice(0, 2), ["defaults", 1]);
  await remove(VWC, "defaults");
  await remove(MWC, "mdefaults");
});

test("validating webhook: denial with upstream's text and the webhook's code; allowed requests pass; only matching rules are sent", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "deny", [webhook("deny.example.com", "/deny-bad")]);
  const denied = await createUntil("default", configMap("bad-one"), (r) => r.status === 403);
  assert.equal(denied.status, 403, denied.text);
  assert.equal(denied.json.message, 'admission webhook "deny.example.com" denied the request: name bad-one is not allowed');
  const ok = await t.request("POST", CM("default"), { body: configMap("good-one") });
  assert.equal(ok.status, 201, ok.text);
  const review = seen.filter((s) => s.path.startsWith("/deny-bad")).at(-1)!.review;
  assert.equal(review.request.operation, "CREATE");
  assert.equal(review.request.namespace, "default");
  assert.deepEqual(review.request.kind, { group: "", version: "v1", kind: "ConfigMap" });
  assert.deepEqual(review.request.resource, { group: "", version: "v1", resource: "configmaps" });
  assert.ok(review.request.userInfo.username, "the user is sent");
  // Secrets are not in the rules: never sent.
  const before = seen.length;
  assert.equal((await t.request("POST", "/api/v1/namespaces/default/secrets", { body: { apiVersion: "v1", kind: "Secret", metadata: { name: "bad-secret" } } })).status, 201);
  assert.equal(seen.length, before);
  // DELETE is not in the rules either.
  assert.equal((await t.request("DELETE", `${CM("default")}/good-one`)).status, 200);
  assert.equal(seen.length, before);
  const families = parseExposition((await t.request("GET", "/metrics")).text);
  const calls = (rejected: string) => observationsAbove(families, "apiserver_admission_webhook_admission_duration_seconds", { name: "deny.example.com", operation: "CREATE", type: "validate", rejected }, "0");
  assert.ok(calls("true") >= 1, "the denial is timed as rejected");
  assert.ok(calls("false") >= 1, "the allowed create as not");
  await remove(VWC, "deny");
});

test("warnings are passed to the client as Warning headers", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "warn", [webhook("warn.example.com", "/allow-warn")]);
  const r = await createUntil("default", configMap("warned"), (x) => warnings(x as never).length > 0);
  assert.equal(r.status, 201);
  assert.deepEqual(warnings(r as never), ["this is deprecated"]);
  await t.request("DELETE", `${CM("default")}/warned`);
  await remove(VWC, "warn");
});

test("mutating webhook: its JSON patch is applied and validating webhooks see the patched object", async () => {
  await configure(MWC, "MutatingWebhookConfiguration", "label", [webhook("label.example.com", "/label")]);
  await configure(VWC, "ValidatingWebhookConfiguration", "check", [webhook("check.example.com", "/require-mutated")]);
  const r = await createUntil("default", configMap("patched", { keep: "me" }), (x) => x.status === 201 && x.json.metadata.labels?.mutated === "yes");
  assert.equal(r.status, 201, JSON.stringify(r.json));
  assert.deepEqual(r.json.metadata.labels, { keep: "me", mutated: "yes" });
  const stored = await t.request("GET", `${CM("default")}/patched`);
  assert.equal(stored.json.metadata.labels.mutated, "yes");
  await t.request("DELETE", `${CM("default")}/patched`);
  await remove(MWC, "label");
  // Without the mutating webhook the validating one refuses (400 when the webhook gives no code).
  const refused = await t.request("POST", CM("default"), { body: configMap("unpatched") });
  assert.equal(refused.status, 400);
  assert.equal(refused.json.message, 'admission webhook "check.example.com" denied the request: not mutated');
  await remove(VWC, "check");
});

test("reinvocationPolicy IfNeeded: a webhook is called again after a later webhook changed the object; Never is not", async () => {
  await configure(MWC, "MutatingWebhookConfiguration", "a-count", [webhook("count.example.com", "/count", { reinvocationPolicy: "IfNeeded" })]);
  await configure(MWC, "MutatingWebhookConfiguration", "b-label", [webhook("label.example.com", "/label")]);
  const r = await createUntil("default", configMap("counted"), (x) => x.status === 201 && x.json.metadata.labels?.mutated === "yes" && x.json.metadata.annotations?.count !== undefined);
  assert.equal(r.status, 201);
  assert.equal(r.json.metadata.annotations.count, "2");
  await t.request("DELETE", `${CM("default")}/counted`);
  const upd = (await t.request("GET", `${MWC}/a-count`)).json;
  upd.webhooks[0].reinvocationPolicy = "Never";
  assert.equal((await t.request("PUT", `${MWC}/a-count`, { body: upd })).status, 200);
  const once = await createUntil("default", configMap("counted-once"), (x) => x.status === 201 && x.json.metadata.annotations?.count === "1");
  assert.equal(once.json.metadata.annotations.count, "1");
  await t.request("DELETE", `${CM("default")}/counted-once`);
  await remove(MWC, "a-count");
  await remove(MWC, "b-label");
});

test("failurePolicy: a dead webhook fails the request (500) or is ignored; a bad response counts as a failure", async () => {
  const dead = "https://127.0.0.1:1/dead";
  await configure(VWC, "ValidatingWebhookConfiguration", "dead", [webhook("dead.example.com", "/", { clientConfig: { url: dead, caBundle } })]);
  const failed = await createUntil("default", configMap("x1"), (r) => r.status === 500);
  assert.equal(failed.status, 500);
  assert.match(failed.json.message, /^Internal error occurred: failed calling webhook "dead\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/dead\?timeout=10s": .*ECONNREFUSED/);
  await remove(VWC, "dead");
  await configure(VWC, "ValidatingWebhookConfiguration", "ignored", [webhook("ignored.example.com", "/", { clientConfig: { url: dead, caBundle }, failurePolicy: "Ignore" }), webhook("uid.example.com", "/wrong-uid", { failurePolicy: "Ignore" })]);
  const ok = await t.request("POST", CM("default"), { body: configMap("x2") });
  assert.equal(ok.status, 201, ok.text);
  await remove(VWC, "ignored");
  await configure(VWC, "ValidatingWebhookConfiguration", "uid", [webhook("uid.example.com", "/wrong-uid")]);
  const bad = await createUntil("default", configMap("x3"), (r) => r.status === 500);
  assert.match(bad.json.message, /failed calling webhook "uid\.example\.com": received invalid webhook response: expected response\.uid=".*", got "other"/);
  await remove(VWC, "uid");
  // An untrusted serving certificate is a failure too (no caBundle: the system roots).
  await configure(VWC, "ValidatingWebhookConfiguration", "untrusted", [webhook("untrusted.example.com", "/", { clientConfig: { url: url("/") } })]);
  const untrusted = await createUntil("default", configMap("x4"), (r) => r.status === 500);
  assert.match(untrusted.json.message, /failed calling webhook "untrusted\.example\.com": failed to call webhook: Post .*certificate/);
  await remove(VWC, "untrusted");
});

test("timeoutSeconds: a slow webhook fails the request after its timeout", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "slow", [webhook("slow.example.com", "/slow", { timeoutSeconds: 1 })]);
  const started = Date.now();
  const r = await createUntil("default", configMap("slowly"), (x) => x.status === 500);
  assert.equal(r.status, 500);
  assert.match(r.json.message, /failed calling webhook "slow\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded/);
  assert.ok(Date.now() - started < 10_000);
  await remove(VWC, "slow");
});

test("each webhook call is timed by apiserver_admission_webhook_admission_duration_seconds and left out of apiserver_request_sli_duration_seconds", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "pause", [webhook("pause.example.com", "/pause")]);
  const scrape = async () => parseExposition((await t.request("GET", "/metrics")).text);
  const posts = { verb: "POST", resource: "configmaps" };
  const before = await scrape();
  const r = await createUntil("default", configMap("paused"), (x) => x.status === 201 && seen.some((s) => s.path.startsWith("/pause") && s.review.request.object?.metadata?.name === "paused"));
  assert.equal(r.status, 201, r.text);
  const after = await scrape();
  const slower = (name: string) => observationsAbove(after, name, posts, "0.6") - observationsAbove(before, name, posts, "0.6");
  assert.ok(slower("apiserver_request_duration_seconds") >= 1, "the create took the webhook's 0.7 s");
  assert.equal(slower("apiserver_request_sli_duration_seconds"), 0, "without the webhook's time it was fast");
  const call = { name: "pause.example.com", operation: "CREATE", rejected: "false", type: "validate" };
  assert.ok(observationsAbove(after, "apiserver_admission_webhook_admission_duration_seconds", call, "0.5") >= 1, "the call, over 0.5 s");
  await remove(VWC, "pause");
});

test("namespaceSelector, objectSelector and matchConditions pick the requests sent", async () => {
  for (const [name, labels] of [["wh-in", { webhooks: "on" }], ["wh-out", {}]] as const) {
    assert.equal((await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } } })).status, 201);
  }
  await configure(VWC, "ValidatingWebhookConfiguration", "selectors", [
    webhook("ns.example.com", "/deny-bad", { namespaceSelector: { matchLabels: { webhooks: "on" } } }),
  ]);
  const inNs = await createUntil("wh-in", configMap("bad-ns"), (r) => r.status === 403);
  assert.equal(inNs.status, 403);
  assert.equal((await t.request("POST", CM("wh-out"), { body: configMap("bad-ns") })).status, 201);
  await remove(VWC, "selectors");

  await configure(VWC, "ValidatingWebhookConfiguration", "objsel", [webhook("obj.example.com", "/deny-bad", { objectSelector: { matchExpressions: [{ key: "check", operator: "Exists" }] } })]);
  const labelled = await createUntil("default", configMap("bad-labelled", { check: "1" }), (r) => r.status === 403);
  assert.equal(labelled.status, 403);
  assert.equal((await t.request("POST", CM("default"), { body: configMap("bad-unlabelled") })).status, 201);
  await remove(VWC, "objsel");

  await configure(VWC, "ValidatingWebhookConfiguration", "conds", [
    webhook("cond.example.com", "/deny-bad", { matchConditions: [{ name: "not-exempt", expression: "!('exempt' in object.metadata.labels)" }, { name: "user", expression: "request.userInfo.username != ''" }] }),
  ]);
  const matched = await createUntil("default", configMap("bad-cond", { x: "y" }), (r) => r.status === 403);
  assert.equal(matched.status, 403);
  assert.equal((await t.request("POST", CM("default"), { body: configMap("bad-exempt", { exempt: "true" }) })).status, 201);
  await remove(VWC, "conds");
  // A condition that fails to evaluate: failurePolicy Fail refuses the request.
  await configure(VWC, "ValidatingWebhookConfiguration", "brokencond", [webhook("broken.example.com", "/", { matchConditions: [{ name: "broken", expression: "object.nosuchfield == 1" }] })]);
  const broken = await createUntil("default", configMap("any"), (r) => r.status === 500);
  assert.match(broken.json.message, /failed calling webhook "broken\.example\.com": matchCondition "broken" failed/);
  await remove(VWC, "brokencond");
});

test("dry run: webhooks without side effects are called with dryRun true; nothing is stored", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "dry", [webhook("dry.example.com", "/deny-bad", { sideEffects: "NoneOnDryRun" })]);
  const r = await createUntil("default", configMap("bad-dry"), (x) => x.status === 403);
  assert.equal(r.status, 403);
  const dry = await t.request("POST", `${CM("default")}?dryRun=All`, { body: configMap("good-dry") });
  assert.equal(dry.status, 201);
  assert.equal(seen.filter((s) => s.path.startsWith("/deny-bad")).at(-1)!.review.request.dryRun, true);
  assert.equal((await t.request("GET", `${CM("default")}/good-dry`)).status, 404);
  await remove(VWC, "dry");
});

test("dry run: a webhook with side effects (Some/Unknown, as older configurations have) refuses with upstream's 400", async () => {
  const hookDef = { ...webhook("effects.example.com", "/"), sideEffects: "Some" };
  const plugin = mutatingWebhooks({
    exemptGroup: GROUP,
    mutating: async () => [{ apiVersion: `${GROUP}/v1`, kind: "MutatingWebhookConfiguration", metadata: { name: "old" }, webhooks: [hookDef] }],
    validating: async () => [],
    namespaceLabels: async () => ({}),
    resolveService: async () => ({ host: "127.0.0.1", port: hookPort }),
    versionOf: () => "v1",
    equivalence: equivalence(() => []),
  });
  const attrs = { operation: "CREATE" as const, resource: { group: "", resource: "configmaps" }, kind: "ConfigMap", subresource: undefined, namespace: "default", name: "c", object: configMap("c"), oldObject: undefined, dryRun: true };
  await assert.rejects(async () => plugin.admit(attrs), (err: any) => err.code === 400 && err.message === 'admission webhook "effects.example.com" does not support dry run');
});

test("clientConfig.service: the call goes to the service's endpoint with the service's TLS name", async () => {
  assert.equal((await t.request("POST", "/api/v1/namespaces/default/services", { body: { apiVersion: "v1", kind: "Service", metadata: { name: "hooks" }, spec: { ports: [{ name: "https", port: 443, targetPort: hookPort }] } } })).status, 201);
  const eps = { apiVersion: "v1", kind: "Endpoints", metadata: { name: "hooks" }, subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: hookPort }] }] };
  const e = await t.request("POST", "/api/v1/namespaces/default/endpoints", { body: eps });
  assert.ok(e.status === 201 || e.status === 409, e.text);
  if (e.status === 409) await t.request("PUT", "/api/v1/namespaces/default/endpoints/hooks", { body: eps });
  await configure(VWC, "ValidatingWebhookConfiguration", "svc", [webhook("svc.example.com", "/", { clientConfig: { service: { namespace: "default", name: "hooks", path: "/deny-bad" }, caBundle } })]);
  const r = await createUntil("default", configMap("bad-svc"), (x) => x.status === 403);
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.message, 'admission webhook "svc.example.com" denied the request: name bad-svc is not allowed');
  await remove(VWC, "svc");
});

test("CONNECT: a webhook on pods/attach sees PodAttachOptions and its denial refuses the attach before anything is proxied", async () => {
  await configure(VWC, "ValidatingWebhookConfiguration", "attach", [
    webhook("deny-attaching-pod.example.com", "/deny-attach", { rules: [{ operations: ["CONNECT"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/attach"] }] }),
  ]);
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "to-be-attached-pod" }, spec: { containers: [{ name: "container1", image: "busybox" }] } };
  assert.equal((await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod })).status, 201);
  const attach = (query: string) => upgradeRefusal(t, "POST", `/api/v1/namespaces/default/pods/to-be-attached-pod/attach?${query}`);
  let denied = await attach("stdin=true&stdout=true&container=container1");
  for (let i = 0; i < 50 && denied.status !== 400; i++) {
    await new Promise((r) => setTimeout(r, 40)); // the configuration reaches the watch cache
    denied = await attach("stdin=true&stdout=true&container=container1");
  }
  assert.equal(denied.status, 400, denied.body);
  assert.equal(JSON.parse(denied.body).message, `admission webhook "deny-attaching-pod.example.com" denied the request: attaching to pod 'to-be-attached-pod' is not allowed`);
  const review = seen.filter((s) => s.path.startsWith("/deny-attach")).at(-1)!.review as Review & { request: { subResource?: string; options?: unknown } };
  assert.equal(review.request.operation, "CONNECT");
  assert.equal(review.request.subResource, "attach");
  assert.deepEqual(review.request.resource, { group: "", version: "v1", resource: "pods" });
  assert.deepEqual(review.request.kind, { group: "", version: "v1", kind: "PodAttachOptions" });
  assert.deepEqual(review.request.object, { kind: "PodAttachOptions", apiVersion: "v1", stdin: true, stdout: true, container: "container1" });
  assert.equal(review.request.options, undefined, "a connect request has no operation options");
  assert.equal(review.request.name, "to-be-attached-pod");
  // Allowed (no stdin): admission passes and the attach goes on to find the pod's node (it has none).
  const allowed = await attach("stdout=true&container=container1");
  assert.equal(allowed.status, 400, allowed.body);
  assert.equal(JSON.parse(allowed.body).message, "pod to-be-attached-pod does not have a host assigned");
  // exec is another subresource: not sent.
  const before = seen.length;
  const exec = await upgradeRefusal(t, "POST", "/api/v1/namespaces/default/pods/to-be-attached-pod/exec?command=sh&stdin=true&container=container1");
  assert.equal(JSON.parse(exec.body).message, "pod to-be-attached-pod does not have a host assigned");
  assert.equal(seen.length, before);
  await t.request("DELETE", "/api/v1/namespaces/default/pods/to-be-attached-pod");
  await remove(VWC, "attach");
});

test("after a mutating webhook's patch the object is defaulted again (a pod's new init container) and a custom resource pruned to its schema", async () => {
  const podHook = webhook("add-init.example.com", "/add-init", { rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }] });
  const crHook = webhook("crontab.example.com", "/crontab", { rules: [{ operations: ["CREATE"], apiGroups: ["stable.example.com"], apiVersions: ["v1"], resources: ["crontabs"] }] });
  await configure(MWC, "MutatingWebhookConfiguration", "normalize", [podHook, crHook]);
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "webhook-to-be-mutated" }, spec: { containers: [{ name: "example", image: "pause" }] } };
  const created = await createAt(t, "/api/v1/namespaces/default/pods", pod, (r) => r.status !== 201 || r.json.spec.initContainers !== undefined);
  assert.equal(created.status, 201, created.text);
  const init = created.json.spec.initContainers[0];
  assert.equal(init.name, "webhook-added-init-container");
  assert.equal(init.terminationMessagePolicy, "File", "defaulted after the patch");
  assert.equal(init.terminationMessagePath, "/dev/termination-log");

  assert.equal((await t.request("POST", "/apis/apiextensions.orch.io/v1/customresourcedefinitions", { body: cronTabCrd() })).status, 201);
  const CT = "/apis/stable.example.com/v1/namespaces/default/crontabs";
  const tab = { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "mutated" }, spec: { cronSpec: "* * * * */5", image: "img", replicas: 3 } };
  const cr = await createAt(t, CT, tab, (r) => r.status === 201 && r.json.spec.image === "mutated");
  assert.equal(cr.status, 201, cr.text);
  assert.equal(cr.json.spec.image, "mutated", "the patch applied");
  assert.equal(cr.json.spec.notInSchema, undefined, "pruned after the patch");
  assert.equal(cr.json.spec.replicas, 1, "defaulted after the patch");
  assert.equal((await t.request("GET", `${CT}/mutated`)).json.spec.notInSchema, undefined, "not stored either");
  await t.request("DELETE", "/api/v1/namespaces/default/pods/webhook-to-be-mutated");
  await remove(MWC, "normalize");
});

test("matchPolicy Equivalent: a webhook for v1 of a custom kind sees a v2 request in v1, and its mutation comes back in v2; Exact does not match", async () => {
  const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
  const schema = { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" } } } } } };
  const crd = {
    apiVersion: "apiextensions.orch.io/v1", kind: "CustomResourceDefinition", metadata: { name: "widgets.multi.example.com" },
    spec: { group: "multi.example.com", scope: "Namespaced", names: { plural: "widgets", kind: "Widget" }, versions: [{ name: "v1", served: true, storage: true, schema }, { name: "v2", served: true, storage: false, schema }] },
  };
  assert.equal((await t.request("POST", CRDS, { body: crd })).status, 201);
  const W = (v: string) => `/apis/multi.example.com/${v}/namespaces/default/widgets`;
  for (let i = 0; i < 100 && (await t.request("GET", W("v2"))).status !== 200; i++) await new Promise((r) => setTimeout(r, 20));
  const v1Rule = { operations: ["CREATE"], apiGroups: ["multi.example.com"], apiVersions: ["v1"], resources: ["widgets"] };
  await configure(MWC, "MutatingWebhookConfiguration", "equivalent", [webhook("label.multi.example.com", "/label/widgets", { rules: [v1Rule] })]);
  await configure(VWC, "ValidatingWebhookConfiguration", "exact", [webhook("exact.multi.example.com", "/deny-bad/widgets", { rules: [v1Rule], matchPolicy: "Exact" })]);
  const widget = (name: string, v: string) => ({ apiVersion: `multi.example.com/${v}`, kind: "Widget", metadata: { name }, spec: { size: 1 } });
  const made = await createAt(t, W("v2"), widget("bad-but-v2", "v2"), (r) => r.json?.metadata?.labels?.mutated === "yes");
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.apiVersion, "multi.example.com/v2", "answered in the request's version");
  assert.equal(made.json.metadata.labels.mutated, "yes", "the v1 webhook's mutation applied");
  const review = seen.filter((s) => s.path.startsWith("/label/widgets?")).at(-1)?.review.request as any;
  assert.ok(review, JSON.stringify(seen.map((s) => s.path)));
  assert.deepEqual(review.kind, { group: "multi.example.com", version: "v1", kind: "Widget" });
  assert.deepEqual(review.resource, { group: "multi.example.com", version: "v1", resource: "widgets" });
  assert.deepEqual(review.requestKind, { group: "multi.example.com", version: "v2", kind: "Widget" });
  assert.deepEqual(review.requestResource, { group: "multi.example.com", version: "v2", resource: "widgets" });
  assert.equal(review.object.apiVersion, "multi.example.com/v1", "the object converted to the webhook's version");
  assert.equal(seen.filter((s) => s.path.startsWith("/deny-bad/widgets?")).length, 0, "Exact: not called for v2");
  const exact = await t.request("POST", W("v1"), { body: widget("bad-in-v1", "v1") });
  assert.equal(exact.status, 403, "Exact: called for v1");
  await remove(MWC, "equivalent");
  await remove(VWC, "exact");
});

test("matchPolicy Equivalent across group names: a webhook for rbac.authorization.k8s.io sees writes through the profile's own RBAC group", async () => {
  const rule = { operations: ["CREATE"], apiGroups: ["rbac.authorization.k8s.io"], apiVersions: ["v1"], resources: ["roles"] };
  await configure(MWC, "MutatingWebhookConfiguration", "alias", [webhook("label.roles.example.com", "/label/roles", { rules: [rule] })]);
  const role = { apiVersion: "rbac.authorization.orch.io/v1", kind: "Role", metadata: { name: "reader" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] };
  const made = await createAt(t, "/apis/rbac.authorization.orch.io/v1/namespaces/default/roles", role, (r) => r.json?.metadata?.labels?.mutated === "yes");
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.apiVersion, "rbac.authorization.orch.io/v1");
  const review = seen.filter((s) => s.path.startsWith("/label/roles?")).at(-1)!.review.request as any;
  assert.equal(review.kind.group, "rbac.authorization.k8s.io");
  assert.equal(review.requestKind.group, "rbac.authorization.orch.io");
  assert.equal(review.object.apiVersion, "rbac.authorization.k8s.io/v1");
  await remove(MWC, "alias");
});
