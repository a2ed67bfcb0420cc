// The write path over real HTTPS and a real lmdb store with the built-in
// types: server-side apply, managed fields, field validation, dry run, the
// admission chain, no-op writes and create-on-update (seed 000, "Update
// mechanisms", "Field validation", "Dry run").

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import type { ApiGroupModule } from "../api/resource.js";
import { sampleApi } from "./testing/sample-api.js";
import { badRequest, forbidden, type ApiObject } from "../machinery/index.js";
import { startTestServer, type TestServer, type TestWatch } from "./testing/harness.js";
import type { AdmissionAttributes } from "./admission/index.js";

const NS = "/api/v1/namespaces/default";
const PODS = `${NS}/pods`;
const DEPLOYS = "/apis/apps/v1/namespaces/default/deployments";
const APPLY = { "content-type": "application/apply-patch+yaml" };
const MERGE = { "content-type": "application/merge-patch+json" };

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { app: "web" }, ...((extra["metadata"] as object) ?? {}) },
  spec: { containers: [{ name: "main", image: "nginx:1.27" }], ...((extra["spec"] as object) ?? {}) },
});

const deployment = (name: string, replicas: number, image = "nginx:1.27") => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image }] } },
  },
});

/** Warning header texts (`299 - "text"` → text). */
function warnings(headers: Record<string, string | string[] | undefined>): string[] {
  const raw = headers["warning"];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : raw.split(/,(?=\s*299 )/);
  return list.map((w) => JSON.parse(w.trim().replace(/^299 - /, "")) as string);
}

describe("writes: apply, field validation, dry run, admission (built-in types over lmdb)", () => {
  let t: TestServer;
  const admitted: AdmissionAttributes[] = [];
  before(async () => {
    t = await startTestServer({
      modules: builtinModules(),
      admission: {
        mutating: [
          {
            name: "TestLabeler",
            handles: (a) => a.resource.resource === "configmaps" && a.operation !== "DELETE",
            admit: (a) => {
              admitted.push(a);
              a.object!.metadata.labels = { ...a.object!.metadata.labels, admitted: "yes" };
            },
          },
          // Declares side effects: dry runs of what it handles must fail, real requests pass.
          { name: "TestSideEffects", sideEffects: "Some", handles: (a) => a.object?.metadata.labels?.["side-effects"] === "yes", admit: () => {} },
        ],
        validating: [
          {
            name: "TestDenier",
            handles: (a) => a.resource.resource === "configmaps",
            validate: (a) => {
              if (a.object?.metadata.labels?.["deny"] === "yes") throw forbidden({ group: "", resource: "configmaps" }, a.name, "denied by TestDenier");
              if (a.operation === "DELETE" && a.oldObject?.metadata.labels?.["keep"] === "yes") throw badRequest("kept by TestDenier");
            },
          },
        ],
      },
    });
  });
  after(async () => t.close());

  /** Asserts the next event on `w` is for `name` (so nothing came before it). */
  async function nextEventIs(w: TestWatch, name: string): Promise<void> {
    const [event] = await w.next(1);
    assert.equal(event.object.metadata.name, name, `unexpected event ${JSON.stringify(event).slice(0, 300)}`);
  }

  test("server-side apply: creates (201), records the Apply manager, no-op keeps the version, removes what it stops applying", async () => {
    const config = deployment("ssa", 2);
    (config.metadata as Record<string, unknown>)["labels"] = { tier: "front" };
    const created = await t.request("PATCH", `${DEPLOYS}/ssa?fieldManager=alice`, { rawBody: JSON.stringify(config), headers: APPLY });
    assert.equal(created.status, 201, created.text);
    const mf = created.json.metadata.managedFields;
    assert.equal(mf.length, 1);
    assert.deepEqual({ ...mf[0], time: "T" }, {
      manager: "alice",
      operation: "Apply",
      apiVersion: "apps/v1",
      time: "T",
      fieldsType: "FieldsV1",
      fieldsV1: mf[0].fieldsV1,
    });
    assert.ok(mf[0].fieldsV1["f:spec"]["f:replicas"], "owns spec.replicas");
    assert.ok(mf[0].fieldsV1["f:metadata"]["f:labels"]["f:tier"], "owns its label");
    assert.equal(mf[0].fieldsV1["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']["f:imagePullPolicy"], undefined, "defaults are not the applier's");
    assert.equal(created.json.spec.template.spec.containers[0].imagePullPolicy, "IfNotPresent", "defaults applied");

    const w = await t.watch(`${DEPLOYS}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`);
    // YAML body, same content: a no-op.
    const yaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ssa
  labels: {tier: front}
spec:
  replicas: 2
  selector: {matchLabels: {app: ssa}}
  template:
    metadata: {labels: {app: ssa}}
    spec:
      containers:
      - name: main
        image: nginx:1.27
`;
    const again = await t.request("PATCH", `${DEPLOYS}/ssa?fieldManager=alice`, { rawBody: yaml, headers: APPLY });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.metadata.resourceVersion, created.json.metadata.resourceVersion, "a no-op apply keeps the resourceVersion");

    // Stop applying the label: it goes, as no one else owns it.
    const dropped = await t.request("PATCH", `${DEPLOYS}/ssa?fieldManager=alice`, { rawBody: JSON.stringify(deployment("ssa", 2)), headers: APPLY });
    assert.equal(dropped.status, 200, dropped.text);
    assert.equal(dropped.json.metadata.labels?.tier, undefined);
    const [event] = await w.next(1);
    assert.equal(event.type, "MODIFIED");
    assert.equal(event.object.metadata.resourceVersion, dropped.json.metadata.resourceVersion, "the no-op made no event");
    w.close();
  });

  test("server-side apply: a second manager conflicts (409 with each field and manager), force takes ownership", async () => {
    await t.request("PATCH", `${DEPLOYS}/shared?fieldManager=alice`, { rawBody: JSON.stringify(deployment("shared", 2)), headers: APPLY });
    const clash = await t.request("PATCH", `${DEPLOYS}/shared?fieldManager=bob&force=false`, { rawBody: JSON.stringify(deployment("shared", 5, "nginx:1.28")), headers: APPLY });
    assert.equal(clash.status, 409, clash.text);
    assert.equal(clash.json.reason, "Conflict");
    assert.equal(
      clash.json.message,
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n- .spec.template.spec.containers[name="main"].image',
    );
    assert.deepEqual(
      clash.json.details.causes.map((c: { field: string; message: string; reason: string }) => [c.reason, c.field, c.message]),
      [
        ["FieldManagerConflict", ".spec.replicas", 'conflict with "alice"'],
        ["FieldManagerConflict", '.spec.template.spec.containers[name="main"].image', 'conflict with "alice"'],
      ],
    );
    const forced = await t.request("PATCH", `${DEPLOYS}/shared?fieldManager=bob&force=true`, { rawBody: JSON.stringify(deployment("shared", 5, "nginx:1.28")), headers: APPLY });
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json.spec.replicas, 5);
    const managers = forced.json.metadata.managedFields.map((e: { manager: string }) => e.manager);
    assert.deepEqual(managers.sort(), ["alice", "bob"]);
    const alice = forced.json.metadata.managedFields.find((e: { manager: string }) => e.manager === "alice");
    assert.equal(alice.fieldsV1["f:spec"]["f:replicas"], undefined, "alice lost spec.replicas");

    // An Update manager conflicts with an applier too, and is named with its version.
    const scaled = await t.request("PATCH", `${DEPLOYS}/shared?fieldManager=scaler`, { body: { spec: { replicas: 7 } }, headers: MERGE });
    assert.equal(scaled.status, 200, scaled.text);
    const back = await t.request("PATCH", `${DEPLOYS}/shared?fieldManager=bob`, { rawBody: JSON.stringify(deployment("shared", 5, "nginx:1.28")), headers: APPLY });
    assert.equal(back.status, 409);
    assert.equal(back.json.message, 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas');
  });

  test("server-side apply through /status owns status only, recorded with its subresource", async () => {
    await t.request("POST", PODS, { body: pod("sst") });
    const status = { apiVersion: "v1", kind: "Pod", metadata: { name: "sst" }, status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } };
    const r = await t.request("PATCH", `${PODS}/sst/status?fieldManager=agent`, { rawBody: JSON.stringify(status), headers: APPLY });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status.phase, "Running");
    const entry = r.json.metadata.managedFields.find((e: { manager: string }) => e.manager === "agent");
    assert.equal(entry.operation, "Apply");
    assert.equal(entry.subresource, "status");
    assert.ok(entry.fieldsV1["f:status"]["f:phase"]);
    // On the main resource, status is reset: an applier there does not own it.
    const main = await t.request("PATCH", `${PODS}/sst?fieldManager=other`, { rawBody: JSON.stringify({ ...status, status: { phase: "Failed" } }), headers: APPLY });
    assert.equal(main.status, 200, main.text);
    assert.equal(main.json.status.phase, "Running");
    const other = main.json.metadata.managedFields.find((e: { manager: string }) => e.manager === "other");
    assert.equal(other?.fieldsV1["f:status"], undefined);
  });

  test("server-side apply: concurrent applies of a missing object create it once, the others apply over it", async () => {
    const answers = await Promise.all(
      ["m1", "m2", "m3", "m4"].map((m) =>
        t.request("PATCH", `${NS}/configmaps/race?fieldManager=${m}`, { rawBody: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "race" }, data: { [m]: "1" } }), headers: APPLY }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 201], answers.map((a) => a.text).join("\n"));
    const cm = (await t.request("GET", `${NS}/configmaps/race`)).json;
    assert.deepEqual(Object.keys(cm.data).sort(), ["m1", "m2", "m3", "m4"]);
  });

  test("server-side apply: fieldManager required, force only for apply, version checked, CBOR refused with 415", async () => {
    const body = JSON.stringify(deployment("opts", 1));
    const noManager = await t.request("PATCH", `${DEPLOYS}/opts`, { rawBody: body, headers: APPLY });
    assert.equal(noManager.status, 422, noManager.text);
    assert.match(noManager.json.message, /PatchOptions.* is invalid: fieldManager: Required value: is required for apply patch/);
    const forceMerge = await t.request("PATCH", `${DEPLOYS}/opts?force=true`, { body: {}, headers: MERGE });
    assert.equal(forceMerge.status, 422);
    assert.match(forceMerge.json.message, /force: Forbidden: may not be specified for non-apply patch/);
    const wrongVersion = await t.request("PATCH", `/apis/apps/v1/namespaces/default/deployments/opts?fieldManager=a`, {
      rawBody: JSON.stringify({ ...deployment("opts", 1), apiVersion: "v1" }),
      headers: APPLY,
    });
    assert.equal(wrongVersion.status, 400);
    const cbor = await t.request("PATCH", `${DEPLOYS}/opts?fieldManager=a`, { rawBody: Buffer.from([0xa0]), headers: { "content-type": "application/apply-patch+cbor" } });
    assert.equal(cbor.status, 415);
    assert.match(cbor.json.message, /accepted media types include: .*application\/apply-patch\+yaml/);
    assert.equal((await t.request("GET", `${DEPLOYS}/opts`)).status, 404, "nothing was created");
  });

  test("Update managers: fieldManager, or the User-Agent's product, on POST, PUT and PATCH", async () => {
    const created = await t.request("POST", `${PODS}?fieldManager=creator`, { body: pod("managed") });
    assert.equal(created.status, 201, created.text);
    const [entry] = created.json.metadata.managedFields;
    assert.equal(entry.manager, "creator");
    assert.equal(entry.operation, "Update");
    assert.equal(entry.apiVersion, "v1");
    assert.ok(entry.fieldsV1["f:spec"]["f:containers"]['k:{"name":"main"}']["f:image"]);
    const patched = await t.request("PATCH", `${PODS}/managed`, {
      body: { metadata: { labels: { extra: "1" } } },
      headers: { ...MERGE, "user-agent": "my-controller/v1.2 (linux/amd64)" },
    });
    assert.equal(patched.status, 200, patched.text);
    const byUa = patched.json.metadata.managedFields.find((e: { manager: string }) => e.manager === "my-controller");
    assert.ok(byUa, JSON.stringify(patched.json.metadata.managedFields));
    assert.deepEqual(Object.keys(byUa.fieldsV1["f:metadata"]["f:labels"]), ["f:extra"]);
    const status = await t.request("PATCH", `${PODS}/managed/status?fieldManager=agent`, { body: { status: { phase: "Running" } }, headers: MERGE });
    assert.equal(status.status, 200, status.text);
    const agent = status.json.metadata.managedFields.find((e: { manager: string }) => e.manager === "agent");
    assert.equal(agent.subresource, "status");
    const tooLong = await t.request("POST", `${PODS}?fieldManager=${"x".repeat(129)}`, { body: pod("toolong") });
    assert.equal(tooLong.status, 422);
    assert.match(tooLong.json.message, /fieldManager: Too long/);
  });

  test("field validation: Warn (default) sends one Warning per field, Strict lists all in a 400, Ignore drops silently", async () => {
    const body = JSON.stringify(pod("fv")).replace('"spec":{', '"spec":{"bogus":1,"nodeName":"a","nodeName":"b",');
    const strict = await t.request("POST", `${PODS}?fieldValidation=Strict`, { rawBody: body });
    assert.equal(strict.status, 400, strict.text);
    assert.equal(strict.json.message, 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.bogus", duplicate field "spec.nodeName"');
    const warn = await t.request("POST", PODS, { rawBody: body });
    assert.equal(warn.status, 201, warn.text);
    assert.deepEqual(warnings(warn.headers), ['unknown field "spec.bogus"', 'duplicate field "spec.nodeName"']);
    assert.equal(warn.json.spec.bogus, undefined, "unknown fields are dropped");
    assert.equal(warn.json.spec.nodeName, "b", "the last duplicate wins");
    const ignore = await t.request("PUT", `${PODS}/fv?fieldValidation=Ignore`, { rawBody: JSON.stringify({ ...warn.json, extra: true }) });
    assert.equal(ignore.status, 200, ignore.text);
    assert.equal(ignore.headers["warning"], undefined);
    const level = await t.request("POST", `${PODS}?fieldValidation=Loud`, { body: pod("fv2") });
    assert.equal(level.status, 400);
    assert.match(level.json.message, /fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"/);
    const typed = await t.request("POST", `${PODS}?fieldValidation=Ignore`, { body: pod("fv3", { spec: { containers: [{ name: "main", image: 5 }] } }) });
    assert.equal(typed.status, 400, "types are checked at every level, and a wrong one is a 400 of its own");
    assert.equal(typed.json.message, 'Pod in version "v1" cannot be handled as a Pod: spec.containers[0].image: Invalid value: "integer": spec.containers[0].image in body must be of type string: "integer"');
    assert.deepEqual([typed.json.details.name, typed.json.details.causes[0].field], ["fv3", "spec.containers[0].image"]);
    // With unknown fields too, under Strict: only the type error.
    const both = await t.request("POST", `${PODS}?fieldValidation=Strict`, { body: pod("fv4", { spec: { bogus: 1, containers: [{ name: "main", image: 5 }] } }) });
    assert.equal(both.status, 400);
    assert.doesNotMatch(both.json.message, /bogus/);
    // Patches: the patch's duplicates and the result's unknown fields.
    const patch = await t.request("PATCH", `${PODS}/fv?fieldValidation=Strict`, { rawBody: '{"metadata":{"labels":{"a":"1","a":"2"}},"spec":{"nope":1}}', headers: MERGE });
    assert.equal(patch.status, 400);
    assert.match(patch.json.message, /strict decoding error: unknown field "spec.nope", duplicate field "metadata.labels.a"/);
    const jsonPatch = await t.request("PATCH", `${PODS}/fv`, { body: [{ op: "add", path: "/spec/nope", value: 1 }], headers: { "content-type": "application/json-patch+json" } });
    assert.equal(jsonPatch.status, 200, jsonPatch.text);
    assert.deepEqual(warnings(jsonPatch.headers), ['unknown field "spec.nope"']);
    // Apply bodies in YAML report duplicates with their line, as upstream's YAML decoder.
    const applyDup = await t.request("PATCH", `${DEPLOYS}/fvd?fieldManager=a&fieldValidation=Strict`, {
      rawBody: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: fvd\n  name: fvd\n",
      headers: APPLY,
    });
    assert.equal(applyDup.status, 400, applyDup.text);
    assert.match(applyDup.json.message, /line 5: key "name" already set in map/);
    // A YAML object body works on POST too.
    const yamlPost = await t.request("POST", PODS, {
      rawBody: "apiVersion: v1\nkind: Pod\nmetadata: {name: fvy}\nspec:\n  containers: [{name: main, image: nginx}]\n  wat: 1\n",
      headers: { "content-type": "application/yaml" },
    });
    assert.equal(yamlPost.status, 201, yamlPost.text);
    assert.deepEqual(warnings(yamlPost.headers), ['unknown field "spec.wat"']);
  });

  test("dry run: POST, PUT, PATCH, apply, DELETE and deletecollection answer as usual and store nothing", async () => {
    const real = await t.request("POST", PODS, { body: pod("dry") });
    const rv = real.json.metadata.resourceVersion;
    const w = await t.watch(`${PODS}?watch=1&resourceVersion=${rv}`);

    const post = await t.request("POST", `${PODS}?dryRun=All`, { body: pod("dry-new") });
    assert.equal(post.status, 201, post.text);
    assert.equal(post.json.spec.restartPolicy, "Always", "defaulted like a real create");
    assert.equal((await t.request("GET", `${PODS}/dry-new`)).status, 404);
    const dup = await t.request("POST", `${PODS}?dryRun=All`, { body: pod("dry") });
    assert.equal(dup.status, 409, "a dry-run create still sees existing objects");

    const put = await t.request("PUT", `${PODS}/dry?dryRun=All`, { body: { ...real.json, metadata: { ...real.json.metadata, labels: { put: "1" } } } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.metadata.labels.put, "1");
    assert.equal(put.json.metadata.resourceVersion, rv, "a dry-run update answers with the version it started from");
    for (const [type, body] of [
      ["application/merge-patch+json", { metadata: { labels: { m: "1" } } }],
      ["application/strategic-merge-patch+json", { metadata: { labels: { s: "1" } } }],
      ["application/json-patch+json", [{ op: "add", path: "/metadata/labels/j", value: "1" }]],
    ] as const) {
      const r = await t.request("PATCH", `${PODS}/dry?dryRun=All`, { body, headers: { "content-type": type } });
      assert.equal(r.status, 200, `${type}: ${r.text}`);
      assert.equal(Object.keys(r.json.metadata.labels).length, 2, type);
    }
    const apply = await t.request("PATCH", `${PODS}/dry?dryRun=All&fieldManager=a`, { rawBody: JSON.stringify(pod("dry", { metadata: { labels: { a: "1" } } })), headers: APPLY });
    assert.equal(apply.status, 200, apply.text);
    const applyNew = await t.request("PATCH", `${PODS}/dry-applied?dryRun=All&fieldManager=a`, { rawBody: JSON.stringify(pod("dry-applied")), headers: APPLY });
    assert.equal(applyNew.status, 201, applyNew.text);
    assert.equal((await t.request("GET", `${PODS}/dry-applied`)).status, 404);

    const del = await t.request("DELETE", `${PODS}/dry?dryRun=All`);
    assert.equal(del.status, 200, del.text);
    const delBody = await t.request("DELETE", `${PODS}/dry`, { body: { dryRun: ["All"] } });
    assert.ok(delBody.status === 200 || delBody.status === 202, delBody.text);
    const delColl = await t.request("DELETE", `${PODS}?dryRun=All`);
    assert.equal(delColl.status, 200, delColl.text);
    assert.ok(delColl.json.items.some((p: ApiObject) => p.metadata.name === "dry"));

    const after = await t.request("GET", `${PODS}/dry`);
    assert.equal(after.status, 200);
    assert.equal(after.json.metadata.resourceVersion, rv, "nothing stored");
    assert.deepEqual(after.json.metadata.labels, { app: "web" });

    const bad = await t.request("POST", `${PODS}?dryRun=Some`, { body: pod("dry-bad") });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /Invalid dry run value: "Some"/);
    const badBody = await t.request("DELETE", `${PODS}/dry`, { body: { dryRun: ["Nope"] } });
    assert.equal(badBody.status, 400);

    // A patch that empties a map leaves no `{}` behind (upstream's omitempty), so it is a no-op here.
    const emptied = await t.request("PATCH", `${PODS}/dry`, { body: { metadata: { annotations: {} } }, headers: MERGE });
    assert.equal(emptied.json.metadata.annotations, undefined);
    assert.equal(emptied.json.metadata.resourceVersion, rv);

    // The marker: the first event after all that is this one.
    await t.request("POST", PODS, { body: pod("dry-marker") });
    await nextEventIs(w, "dry-marker");
    w.close();
  });

  test("admission: mutating then validating plugins on every write; a side-effect plugin fails dry runs only", async () => {
    const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels }, data: { a: "1" } });
    const created = await t.request("POST", `${NS}/configmaps`, { body: cm("adm") });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.labels.admitted, "yes", "mutated");
    const seen = admitted.find((a) => a.name === "adm")!;
    assert.equal(seen.operation, "CREATE");
    assert.equal(seen.namespace, "default");
    assert.equal(seen.dryRun, false);
    const denied = await t.request("PATCH", `${NS}/configmaps/adm`, { body: { metadata: { labels: { deny: "yes" } } }, headers: MERGE });
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /denied by TestDenier/);
    const deniedApply = await t.request("PATCH", `${NS}/configmaps/adm2?fieldManager=x`, { rawBody: JSON.stringify(cm("adm2", { deny: "yes" })), headers: APPLY });
    assert.equal(deniedApply.status, 403, "apply goes through admission too");
    await t.request("PATCH", `${NS}/configmaps/adm`, { body: { metadata: { labels: { keep: "yes" } } }, headers: MERGE });
    const kept = await t.request("DELETE", `${NS}/configmaps/adm`);
    assert.equal(kept.status, 400);
    assert.match(kept.json.message, /kept by TestDenier/);

    const side = cm("side", { "side-effects": "yes" });
    const dry = await t.request("POST", `${NS}/configmaps?dryRun=All`, { body: side });
    assert.equal(dry.status, 400);
    assert.equal(dry.json.message, 'admission plugin "TestSideEffects" has side effects and does not support dry run');
    const dryOther = await t.request("POST", `${NS}/configmaps?dryRun=All`, { body: cm("side2") });
    assert.equal(dryOther.status, 201, "plugins that do not handle the request do not count");
    assert.equal((await t.request("POST", `${NS}/configmaps`, { body: side })).status, 201, "the real request runs");
  });

  test("no-op writes keep the resourceVersion and make no watch event: PUT, every patch type, apply", async () => {
    const created = await t.request("POST", `${PODS}?fieldManager=m`, { body: pod("noop") });
    const rv = created.json.metadata.resourceVersion;
    const w = await t.watch(`${PODS}?watch=1&resourceVersion=${rv}`);
    const put = await t.request("PUT", `${PODS}/noop?fieldManager=m`, { body: created.json });
    assert.equal(put.json.metadata.resourceVersion, rv, "PUT");
    // The same object with its keys in another order is still a no-op.
    const reordered = Object.fromEntries(Object.entries(created.json).reverse());
    assert.equal((await t.request("PUT", `${PODS}/noop?fieldManager=other`, { body: reordered })).json.metadata.resourceVersion, rv, "PUT reordered");
    for (const [type, body] of [
      ["application/merge-patch+json", { metadata: { labels: { app: "web" } } }],
      ["application/strategic-merge-patch+json", { spec: { containers: [{ name: "main", image: "nginx:1.27" }] } }],
      ["application/json-patch+json", [{ op: "replace", path: "/metadata/labels/app", value: "web" }]],
    ] as const) {
      const r = await t.request("PATCH", `${PODS}/noop?fieldManager=p`, { body, headers: { "content-type": type } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.resourceVersion, rv, type);
    }
    const applied = await t.request("PATCH", `${PODS}/noop?fieldManager=ap`, { rawBody: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "noop" } }), headers: APPLY });
    assert.equal(applied.status, 200, applied.text);
    const again = await t.request("PATCH", `${PODS}/noop?fieldManager=ap`, { rawBody: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "noop" } }), headers: APPLY });
    assert.equal(again.json.metadata.resourceVersion, applied.json.metadata.resourceVersion, "apply twice");
    await t.request("POST", PODS, { body: pod("noop-marker") });
    const [first] = await w.next(1);
    // An apply of nothing owns nothing, so even the first apply was a no-op.
    assert.equal(first.object.metadata.name, "noop-marker", JSON.stringify(first).slice(0, 300));
    w.close();
  });

  test("PUT to a missing object: leases are created (201), pods are not (404)", async () => {
    const lease = { apiVersion: "coordination.orch.io/v1", kind: "Lease", metadata: { name: "put-lease" }, spec: { holderIdentity: "me" } };
    const made = await t.request("PUT", "/apis/coordination.orch.io/v1/namespaces/default/leases/put-lease?fieldManager=holder", { body: lease });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.metadata.managedFields[0].manager, "holder");
    const missing = await t.request("PUT", `${PODS}/put-missing`, { body: pod("put-missing") });
    assert.equal(missing.status, 404);
  });

  test("scale: dry run, field validation and the manager recorded with subresource scale", async () => {
    await t.request("POST", DEPLOYS, { body: deployment("sc", 1) });
    const dry = await t.request("PATCH", `${DEPLOYS}/sc/scale?dryRun=All`, { body: { spec: { replicas: 4 } }, headers: MERGE });
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.json.spec.replicas, 4);
    assert.equal((await t.request("GET", `${DEPLOYS}/sc`)).json.spec.replicas, 1, "dry run stored nothing");
    const strict = await t.request("PUT", `${DEPLOYS}/sc/scale?fieldValidation=Strict`, { body: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "sc" }, spec: { replicas: 2, bogus: 1 } } });
    assert.equal(strict.status, 400);
    assert.match(strict.json.message, /unknown field "spec.bogus"/);
    const scaled = await t.request("PATCH", `${DEPLOYS}/sc/scale?fieldManager=hpa`, { body: { spec: { replicas: 3 } }, headers: MERGE });
    assert.equal(scaled.status, 200, scaled.text);
    const obj = (await t.request("GET", `${DEPLOYS}/sc`)).json;
    assert.equal(obj.spec.replicas, 3);
    const hpa = obj.metadata.managedFields.find((e: { manager: string }) => e.manager === "hpa");
    assert.equal(hpa.subresource, "scale");
    assert.deepEqual(hpa.fieldsV1, { "f:spec": { "f:replicas": {} } });

    // Apply through /scale: ownership of replicas maps between the Scale and the deployment.
    const scaleApply = (replicas: number, query = "") =>
      t.request("PATCH", `${DEPLOYS}/sc/scale?fieldManager=autoscaler${query}`, {
        rawBody: JSON.stringify({ apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "sc" }, spec: { replicas } }),
        headers: APPLY,
      });
    const clash = await scaleApply(6);
    assert.equal(clash.status, 409, clash.text);
    assert.equal(clash.json.message, 'Apply failed with 1 conflict: conflict with "hpa" with subresource "scale" using autoscaling/v1: .spec.replicas');
    const dryApply = await scaleApply(6, "&force=true&dryRun=All");
    assert.equal(dryApply.status, 200, dryApply.text);
    assert.equal(dryApply.json.spec.replicas, 6);
    assert.equal((await t.request("GET", `${DEPLOYS}/sc`)).json.spec.replicas, 3, "dry run stored nothing");
    const forced = await scaleApply(6, "&force=true");
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json.kind, "Scale");
    const after = (await t.request("GET", `${DEPLOYS}/sc`)).json;
    assert.equal(after.spec.replicas, 6);
    const managers = after.metadata.managedFields.map((e: { manager: string; operation: string; apiVersion: string; subresource?: string }) => [e.manager, e.operation, e.apiVersion, e.subresource ?? ""]);
    assert.deepEqual(managers.filter((m: string[]) => m[0] !== undefined), [["autoscaler", "Apply", "apps/v1", "scale"]], "hpa lost replicas, its only field");
    const mine = after.metadata.managedFields.find((e: { manager: string }) => e.manager === "autoscaler");
    assert.deepEqual(mine.fieldsV1, { "f:spec": { "f:replicas": {} } });
    assert.equal((await scaleApply(6)).status, 200, "re-applying what it owns is no conflict");
  });
});

describe("admission declared by a kind (sample API over lmdb)", () => {
  // The widgets declaration brings its own plugins; the server adds nothing.
  const withPlugins: ApiGroupModule = {
    registerSchemas: (r) => sampleApi.registerSchemas(r),
    resources: (naming) =>
      sampleApi.resources(naming).map((d) =>
        d.resource !== "widgets"
          ? d
          : {
              ...d,
              admission: {
                mutating: [{ name: "WidgetColor", admit: (a) => void ((a.object as { spec?: { color?: string } }).spec!.color ??= "blue") }],
                validating: [{ name: "NoGreen", validate: (a) => { if ((a.object as { spec?: { color?: string } } | undefined)?.spec?.color === "green") throw badRequest("no green widgets"); } }],
              },
            },
      ),
  };
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [withPlugins] });
  });
  after(async () => t.close());

  test("the kind's mutating and validating plugins run on its writes", async () => {
    const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
    const made = await t.request("POST", W, { body: { apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name: "w" }, spec: {} } });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.spec.color, "blue");
    const green = await t.request("PATCH", `${W}/w`, { body: { spec: { color: "green" } }, headers: MERGE });
    assert.equal(green.status, 400);
    assert.equal(green.json.message, "no green widgets");
  });
});
