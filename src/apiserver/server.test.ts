// The API server's generic behaviour over real HTTPS and a real lmdb store,
// with a small sample API (the built-in kinds have their own tests): the
// seed's resource-version tables, lists and paging, watches, two-phase
// deletion, errors as Status objects, and hostile input.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const widget = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "samples.orch.io/v1",
  kind: "Widget",
  metadata: { name, ...((extra["metadata"] as object) ?? {}) },
  spec: { color: "red", ...((extra["spec"] as object) ?? {}) },
});

describe("API server (sample API over lmdb)", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi], bookmarkIntervalMs: 200 });
  });
  after(async () => t.close());

  test("create, get, duplicate and missing objects; errors are Status objects", async () => {
    const created = await t.request("POST", W, { body: widget("crud") });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.namespace, "default");
    assert.equal(created.json.metadata.generation, 1);
    assert.match(created.json.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(created.json.metadata.resourceVersion, /^[1-9][0-9]*$/);
    assert.equal(created.json.spec.size, 1, "schema default applied");

    const dup = await t.request("POST", W, { body: widget("crud") });
    assert.equal(dup.status, 409);
    assert.deepEqual(
      { kind: dup.json.kind, status: dup.json.status, reason: dup.json.reason, code: dup.json.code, message: dup.json.message },
      { kind: "Status", status: "Failure", reason: "AlreadyExists", code: 409, message: 'widgets.samples.orch.io "crud" already exists' },
    );
    const missing = await t.request("GET", `${W}/nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'widgets.samples.orch.io "nope" not found');
    assert.equal(missing.json.details.name, "nope");

    const got = await t.request("GET", `${W}/crud`);
    assert.equal(got.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
    const beta = await t.request("GET", "/apis/samples.orch.io/v1beta1/namespaces/default/widgets/crud");
    assert.equal(beta.json.apiVersion, "samples.orch.io/v1beta1", "versions share storage");
    const clash = await t.request("POST", "/apis/samples.orch.io/v1beta1/namespaces/default/widgets", {
      body: { ...widget("crud"), apiVersion: "samples.orch.io/v1beta1" },
    });
    assert.equal(clash.status, 409, "the same name through another version is a clash");
  });

  test("generateName adds a random suffix", async () => {
    const r = await t.request("POST", W, { body: { ...widget(""), metadata: { generateName: "gen-" } } });
    assert.equal(r.status, 201, r.text);
    assert.match(r.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  test("PUT: stale resourceVersion is 409, generation follows spec changes, status only through /status", async () => {
    const c = (await t.request("POST", W, { body: widget("upd") })).json;
    const stale = { ...c, metadata: { ...c.metadata, resourceVersion: "1" } };
    assert.equal((await t.request("PUT", `${W}/upd`, { body: stale })).status, 409);

    const labelled = (await t.request("PUT", `${W}/upd`, { body: { ...c, metadata: { ...c.metadata, labels: { a: "b" } } } })).json;
    assert.equal(labelled.metadata.generation, 1, "metadata changes keep generation");
    assert.notEqual(labelled.metadata.resourceVersion, c.metadata.resourceVersion);
    const resized = await t.request("PUT", `${W}/upd`, { body: { ...labelled, spec: { ...labelled.spec, size: 5 }, status: { phase: "Sneaky" } } });
    assert.equal(resized.json.metadata.generation, 2);
    assert.equal(resized.json.status, undefined, "the main resource cannot set status");
    const st = await t.request("PUT", `${W}/upd/status`, { body: { ...resized.json, spec: { size: 99 }, status: { phase: "Ready" } } });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.json.status.phase, "Ready");
    assert.equal(st.json.spec.size, 5, "the status subresource cannot change spec");

    const wrongName = await t.request("PUT", `${W}/upd`, { body: { ...st.json, metadata: { ...st.json.metadata, name: "other" } } });
    assert.equal(wrongName.status, 400);
  });

  test("merge patch; a no-op patch keeps the resourceVersion; a conditional patch can conflict", async () => {
    const c = (await t.request("POST", W, { body: widget("mp") })).json;
    const merge = { "content-type": "application/merge-patch+json" };
    const p = await t.request("PATCH", `${W}/mp`, { rawBody: JSON.stringify({ metadata: { labels: { x: "1" } } }), headers: merge });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.json.metadata.labels.x, "1");
    const same = await t.request("PATCH", `${W}/mp`, { rawBody: JSON.stringify({ metadata: { labels: { x: "1" } } }), headers: merge });
    assert.equal(same.json.metadata.resourceVersion, p.json.metadata.resourceVersion, "no-op: same resourceVersion");
    const stale = await t.request("PATCH", `${W}/mp`, {
      rawBody: JSON.stringify({ metadata: { resourceVersion: c.metadata.resourceVersion, labels: { y: "2" } } }),
      headers: merge,
    });
    assert.equal(stale.status, 409);
    const bad = await t.request("PATCH", `${W}/mp`, { rawBody: "{}", headers: { "content-type": "application/x-unknown" } });
    assert.equal(bad.status, 415);
    assert.equal(bad.json.reason, "UnsupportedMediaType");
  });

  test("lists: kind, version, paging at one version, remainingItemCount, selectors", async () => {
    const ns = "/apis/samples.orch.io/v1/namespaces/paging/widgets";
    assert.equal((await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "paging" } } })).status, 201);
    for (let i = 0; i < 7; i++) {
      const r = await t.request("POST", ns, { body: widget(`p${i}`, { metadata: { labels: { parity: i % 2 ? "odd" : "even" } }, spec: { color: i < 3 ? "blue" : "green" } }) });
      assert.equal(r.status, 201, r.text);
    }
    const first = (await t.request("GET", `${ns}?limit=3`)).json;
    assert.equal(first.kind, "WidgetList");
    assert.equal(first.apiVersion, "samples.orch.io/v1");
    assert.deepEqual(first.items.map((w: any) => w.metadata.name), ["p0", "p1", "p2"]);
    assert.equal(first.metadata.remainingItemCount, 4);
    assert.ok(first.metadata.continue);
    await t.request("POST", ns, { body: widget("p1a") }); // written between pages: not in this listing
    const second = (await t.request("GET", `${ns}?limit=3&continue=${encodeURIComponent(first.metadata.continue)}`)).json;
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion, "every chunk at the first chunk's version");
    assert.deepEqual(second.items.map((w: any) => w.metadata.name), ["p3", "p4", "p5"]);
    const third = (await t.request("GET", `${ns}?limit=3&continue=${encodeURIComponent(second.metadata.continue)}`)).json;
    assert.deepEqual(third.items.map((w: any) => w.metadata.name), ["p6"]);
    assert.equal(third.metadata.continue, undefined);
    assert.equal(third.metadata.remainingItemCount, undefined);

    const odd = (await t.request("GET", `${ns}?labelSelector=parity%3Dodd&limit=2`)).json;
    assert.deepEqual(odd.items.map((w: any) => w.metadata.name), ["p1", "p3"]);
    assert.equal(odd.metadata.remainingItemCount, undefined, "omitted with selectors");
    const notin = (await t.request("GET", `${ns}?labelSelector=${encodeURIComponent("parity notin (odd),parity")}`)).json;
    assert.deepEqual(notin.items.map((w: any) => w.metadata.name), ["p0", "p2", "p4", "p6"]);
    const blue = (await t.request("GET", `${ns}?fieldSelector=spec.color%3Dblue`)).json;
    assert.deepEqual(blue.items.map((w: any) => w.metadata.name), ["p0", "p1", "p2"]);
    const byName = (await t.request("GET", `/apis/samples.orch.io/v1/widgets?fieldSelector=metadata.name%3Dp4`)).json;
    assert.deepEqual(byName.items.map((w: any) => `${w.metadata.namespace}/${w.metadata.name}`), ["paging/p4"], "across namespaces");
    const unsupported = await t.request("GET", `${ns}?fieldSelector=spec.size%3D1`);
    assert.equal(unsupported.status, 400);
    assert.match(unsupported.json.message, /field label not supported: spec.size/);
    assert.equal((await t.request("GET", `${ns}?labelSelector=${encodeURIComponent("a in (")}`)).status, 400);
  });

  test("list resource-version semantics (seed table), including invalid combinations and 504 for the future", async () => {
    const a = (await t.request("POST", W, { body: widget("rv-a") })).json;
    await t.request("PATCH", `${W}/rv-a`, { rawBody: JSON.stringify({ spec: { color: "changed" } }), headers: { "content-type": "application/merge-patch+json" } });
    const exact = await t.request("GET", `${W}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 200, exact.text);
    assert.equal(exact.json.metadata.resourceVersion, a.metadata.resourceVersion);
    assert.equal(exact.json.items.find((w: any) => w.metadata.name === "rv-a").spec.color, "red", "Exact serves the old state");
    const notOlder = await t.request("GET", `${W}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`);
    assert.equal(notOlder.json.items.find((w: any) => w.metadata.name === "rv-a").spec.color, "changed");
    assert.equal((await t.request("GET", `${W}?resourceVersion=0`)).status, 200);
    const limitedExact = await t.request("GET", `${W}?resourceVersion=${a.metadata.resourceVersion}&limit=1`);
    assert.equal(limitedExact.json.metadata.resourceVersion, a.metadata.resourceVersion, "rv with limit is Exact");

    for (const q of [
      "resourceVersionMatch=Exact",
      "resourceVersion=0&resourceVersionMatch=Exact",
      "resourceVersionMatch=NotOlderThan",
      "resourceVersion=5&resourceVersionMatch=Bogus",
      `limit=1&continue=abc&resourceVersion=${a.metadata.resourceVersion}`,
      "resourceVersion=abc",
    ]) {
      const r = await t.request("GET", `${W}?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.json.kind, "Status");
    }
    const future = await t.request("GET", `${W}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan`);
    assert.equal(future.status, 504);
    assert.match(future.json.message, /Too large resource version/);
  });

  test("watch: synthetic ADDED for unset and 0, none for an exact version; resume; selector transitions", async () => {
    const base = (await t.request("POST", W, { body: widget("w-a", { metadata: { labels: { team: "x" } } }) })).json;
    const unset = await t.watch(`${W}?watch=1&fieldSelector=metadata.name%3Dw-a`);
    assert.equal(unset.status, 200);
    const [initial] = await unset.next(1);
    assert.equal(initial.type, "ADDED");
    assert.equal(initial.object.metadata.name, "w-a");
    const zero = await t.watch(`${W}?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dw-a`);
    assert.equal((await zero.next(1))[0].type, "ADDED");
    const exact = await t.watch(`${W}?watch=true&resourceVersion=${base.metadata.resourceVersion}&labelSelector=team%3Dx`);

    const merge = { "content-type": "application/merge-patch+json" };
    const m = (await t.request("PATCH", `${W}/w-a`, { rawBody: JSON.stringify({ spec: { size: 3 } }), headers: merge })).json;
    assert.deepEqual((await unset.next(1)).map((e) => [e.type, e.object.spec.size]), [["MODIFIED", 3]]);
    assert.deepEqual((await exact.next(1)).map((e) => e.type), ["MODIFIED"], "no synthetic events for an exact version");
    await t.request("PATCH", `${W}/w-a`, { rawBody: JSON.stringify({ metadata: { labels: { team: "y" } } }), headers: merge });
    assert.deepEqual((await exact.next(1)).map((e) => e.type), ["DELETED"], "leaving the selection is DELETED for this watcher");
    unset.close();
    zero.close();
    exact.close();

    const resumed = await t.watch(`${W}?watch=true&resourceVersion=${m.metadata.resourceVersion}&fieldSelector=metadata.name%3Dw-a`);
    const [next] = await resumed.next(1);
    assert.equal(next.type, "MODIFIED");
    assert.equal(next.object.metadata.labels.team, "y", "resuming from the last version sees what came after");
    resumed.close();
  });

  test("watch: bookmarks, streaming lists with the end-of-initial-events bookmark, and their 400", async () => {
    await t.request("POST", W, { body: widget("stream-a") });
    const stream = await t.watch(`${W}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dstream-a`);
    const [added, end] = await stream.next(2);
    assert.equal(added.type, "ADDED");
    assert.equal(end.type, "BOOKMARK");
    assert.equal(end.object.metadata.annotations["orch.io/initial-events-end"], "true");
    assert.equal(end.object.kind, "Widget");
    const [periodic] = await stream.next(1, 3000);
    assert.equal(periodic.type, "BOOKMARK");
    assert.match(periodic.object.metadata.resourceVersion, /^[1-9][0-9]*$/);
    stream.close();
    const bad = await t.request("GET", `${W}?watch=1&sendInitialEvents=true`);
    assert.equal(bad.status, 400);
  });

  test("two-phase deletion: finalizers hold the object, the last one removed deletes it", async () => {
    const c = (await t.request("POST", W, { body: widget("fin", { metadata: { finalizers: ["example.com/hold"] } }) })).json;
    const w = await t.watch(`${W}?watch=1&resourceVersion=${c.metadata.resourceVersion}&fieldSelector=metadata.name%3Dfin`);
    const d = await t.request("DELETE", `${W}/fin`, { body: { propagationPolicy: "Background" } });
    assert.equal(d.status, 202, d.text);
    assert.ok(d.json.metadata.deletionTimestamp);
    assert.equal(d.json.metadata.deletionGracePeriodSeconds, 0);
    assert.equal((await w.next(1))[0].type, "MODIFIED");
    const still = await t.request("GET", `${W}/fin`);
    assert.equal(still.status, 200, "the object stays while finalizers remain");
    const removed = await t.request("PATCH", `${W}/fin`, { rawBody: JSON.stringify({ metadata: { finalizers: null } }), headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(removed.status, 200, removed.text);
    const [gone] = await w.next(1);
    assert.equal(gone.type, "DELETED");
    assert.equal((await t.request("GET", `${W}/fin`)).status, 404);
    w.close();
  });

  test("delete options: preconditions, orphan finalizer, immediate delete, deletecollection", async () => {
    const c = (await t.request("POST", W, { body: widget("pre") })).json;
    const wrongUid = await t.request("DELETE", `${W}/pre`, { body: { preconditions: { uid: "00000000-0000-0000-0000-000000000000" } } });
    assert.equal(wrongUid.status, 409);
    assert.match(wrongUid.json.message, /Precondition failed: UID in precondition/);
    const orphan = await t.request("DELETE", `${W}/pre`, { body: { propagationPolicy: "Orphan", preconditions: { uid: c.metadata.uid } } });
    assert.equal(orphan.status, 202);
    assert.deepEqual(orphan.json.metadata.finalizers, ["orphan"]);
    assert.equal((await t.request("DELETE", `${W}/pre`, { body: { propagationPolicy: "Sideways" } })).status, 400);

    await t.request("POST", W, { body: widget("now") });
    const now = await t.request("DELETE", `${W}/now`);
    assert.equal(now.status, 200);
    assert.equal((await t.request("GET", `${W}/now`)).status, 404);
    const dry = await t.request("POST", `${W}?dryRun=All`, { body: widget("dry") });
    assert.equal(dry.status, 201);
    assert.equal((await t.request("GET", `${W}/dry`)).status, 404, "dry run stores nothing");

    for (const n of ["dc1", "dc2"]) await t.request("POST", W, { body: widget(n, { metadata: { labels: { batch: "dc" } } }) });
    const dc = await t.request("DELETE", `${W}?labelSelector=batch%3Ddc`);
    assert.equal(dc.status, 200, dc.text);
    assert.deepEqual(dc.json.items.map((w: any) => w.metadata.name).sort(), ["dc1", "dc2"]);
    assert.equal((await t.request("GET", `${W}?labelSelector=batch%3Ddc`)).json.items.length, 0);
  });

  test("bad input gets a clear Status and changes nothing", async () => {
    const before = (await t.request("POST", W, { body: widget("safe") })).json;
    const cases: Array<[string, string, Parameters<TestServer["request"]>[2], number, RegExp?]> = [
      ["POST", W, { rawBody: '{"apiVersion": "samples.orch.io/v1", "kind": ' }, 400, /JSON/],
      ["POST", W, { rawBody: "[".repeat(20_000) + "]".repeat(20_000) }, 400, /exceeded max depth/],
      ["POST", W, { rawBody: JSON.stringify({ ...widget("big"), spec: { color: "x".repeat(3.5 * 1024 * 1024) } }) }, 413],
      ["POST", W, { rawBody: JSON.stringify({ ...widget("big2"), spec: { color: "x".repeat(2 * 1024 * 1024) } }) }, 413],
      ["POST", W, { body: { ...widget("nsmismatch"), metadata: { name: "nsmismatch", namespace: "other" } } }, 400, /namespace/],
      ["POST", W, { body: { ...widget("kindmismatch"), kind: "Gadget" } }, 400, /kind/],
      ["POST", W, { body: { ...widget("vmismatch"), apiVersion: "samples.orch.io/v9" } }, 400, /API version/],
      ["POST", W, { body: { ...widget("Bad_Name") } }, 422, /metadata.name: Invalid value: "Bad_Name"/],
      ["POST", W, { body: { ...widget("neg"), spec: { size: -1 } } }, 422, /spec.size: Invalid value: -1/],
      ["POST", W, { body: "just a string" }, 400],
      ["GET", "/apis/samples.orch.io/v1/namespaces/default/gadgets", undefined, 404, /^the server could not find the requested resource$/],
      // Deleting a subresource never deletes its object; the all-namespaces path serves list and watch only.
      ["DELETE", `${W}/safe/status`, undefined, 405, /delete is not supported on resources of kind "widgets\/status.samples.orch.io"/],
      ["DELETE", `${W}/safe/scale`, undefined, 405],
      ["DELETE", "/apis/samples.orch.io/v1/widgets", undefined, 405, /deletecollection is not supported/],
      ["POST", "/apis/samples.orch.io/v1/widgets", { body: widget("nowhere") }, 405, /create is not supported/],
      ["POST", `${W}/safe`, { body: widget("safe") }, 405],
      ["PUT", W, { body: widget("safe") }, 405],
      ["POST", "/apis/samples.orch.io/v1/namespaces/nowhere/widgets", { body: widget("lost") }, 404, /namespaces "nowhere" not found/],
      ["GET", `${W}?limit=abc`, undefined, 400],
      // Never strategic merge for a custom resource (widgets stand for one).
      ["PATCH", `${W}/safe`, { rawBody: '{"spec":{"size":9}}', headers: { "content-type": "application/strategic-merge-patch+json" } }, 415, /^the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml$/],
    ];
    for (const [method, path, opts, code, message] of cases) {
      const r = await t.request(method, path, opts);
      assert.equal(r.status, code, `${method} ${path}: ${r.text.slice(0, 300)}`);
      assert.equal(r.json?.kind, "Status", `${method} ${path} answers a Status`);
      if (message) assert.match(r.json.message, message);
    }
    const after = (await t.request("GET", `${W}/safe`)).json;
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, "nothing stored changed");
    assert.equal((await t.request("GET", "/readyz")).status, 200, "the server is still up");
  });

  test("authentication, discovery and OpenAPI", async () => {
    const anon = await t.request("GET", W, { headers: { authorization: "Bearer wrong" } });
    assert.equal(anon.status, 401);
    assert.equal(anon.json.reason, "Unauthorized");
    assert.equal((await t.request("GET", "/version", { headers: { authorization: "" } })).status, 200);

    const apis = (await t.request("GET", "/apis")).json;
    assert.equal(apis.kind, "APIGroupList");
    assert.deepEqual(apis.groups.map((g: any) => g.name), ["samples.orch.io"]);
    const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    const agg = await t.request("GET", "/apis", { headers: { accept } });
    assert.equal(agg.headers["content-type"], "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    const res = agg.json.items[0].versions[0].resources[0];
    assert.equal(res.resource, "widgets");
    assert.deepEqual(res.categories, ["all"]);
    assert.deepEqual(res.subresources.map((s: any) => s.subresource), ["scale", "status"]);
    // Each version asked for is answered in its own media type, whichever was asked first (kubectl 1.27 asks for v2beta1).
    const beta = await t.request("GET", "/apis", { headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json" } });
    assert.equal(beta.headers["content-type"], "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
    assert.equal(beta.json.apiVersion, "apidiscovery.k8s.io/v2beta1");
    const list = (await t.request("GET", "/apis/samples.orch.io/v1")).json;
    assert.deepEqual(list.resources.map((r: any) => r.name), ["widgets", "widgets/scale", "widgets/status"]);

    const index = (await t.request("GET", "/openapi/v3")).json;
    const url = index.paths["apis/samples.orch.io/v1"].serverRelativeURL;
    const doc = (await t.request("GET", url)).json;
    const schema = doc.components.schemas["io.orch.samples.v1.Widget"];
    assert.deepEqual(schema["x-kubernetes-group-version-kind"], [{ group: "samples.orch.io", version: "v1", kind: "Widget" }]);
    const patchOp = doc.paths["/apis/samples.orch.io/v1/namespaces/{namespace}/widgets/{name}"].patch;
    assert.ok(patchOp.parameters.some((p: any) => p.name === "fieldValidation"));
  });

  test("Table and metadata-only representations", async () => {
    await t.request("POST", W, { body: widget("tbl", { spec: { color: "teal" } }) });
    const table = await t.request("GET", `${W}?fieldSelector=metadata.name%3Dtbl`, {
      headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" },
    });
    assert.equal(table.json.kind, "Table");
    assert.deepEqual(table.json.columnDefinitions.map((c: any) => c.name), ["Name", "Color", "Size"]);
    assert.deepEqual(table.json.rows[0].cells, ["tbl", "teal", 1]);
    assert.equal(table.json.rows[0].object.kind, "PartialObjectMetadata");
    const meta = await t.request("GET", `${W}/tbl`, { headers: { accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.orch.io" } });
    assert.equal(meta.json.kind, "PartialObjectMetadata");
    assert.equal(meta.json.apiVersion, "meta.orch.io/v1");
    assert.equal(meta.json.spec, undefined);
    const none = await t.request("GET", `${W}/tbl`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } });
    assert.equal(none.status, 200);
    const refused = await t.request("GET", `${W}/tbl`, { headers: { accept: "text/html" } });
    assert.equal(refused.status, 406);
    assert.equal(refused.json.reason, "NotAcceptable");
  });
});

describe("sharded list and watch (gate ShardedListAndWatch)", () => {
  const selector = encodeURIComponent("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')");
  for (const enabled of [true, false]) {
    test(`gate ${enabled ? "on" : "off"}`, async () => {
      const t = await startTestServer({ modules: [sampleApi], gates: { ShardedListAndWatch: String(enabled) } });
      try {
        for (let i = 0; i < 12; i++) await t.request("POST", W, { body: widget(`s${i}`) });
        const all = (await t.request("GET", W)).json.items.length;
        const r = await t.request("GET", `${W}?shardSelector=${selector}`);
        assert.equal(r.status, 200, r.text);
        if (enabled) {
          assert.equal(r.json.metadata.shardInfo.selector, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')");
          const other = (await t.request("GET", `${W}?shardSelector=${encodeURIComponent("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')")}`)).json;
          assert.equal(r.json.items.length + other.items.length, all, "two halves make the whole");
          assert.equal((await t.request("GET", `${W}?shardSelector=${encodeURIComponent("shardRange(bogus)")}`)).status, 400);
        } else {
          assert.equal(r.json.metadata.shardInfo, undefined);
          assert.equal(r.json.items.length, all, "the selector is ignored");
          assert.equal((await t.request("GET", `${W}?shardSelector=${encodeURIComponent("shardRange(bogus)")}`)).status, 200);
        }
      } finally {
        await t.close();
      }
    });
  }
});

describe("subresources: scale and finalize", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi] });
  });
  after(async () => t.close());

  test("scale: GET, PUT without Content-Type, merge PATCH, validation, stale version", async () => {
    await t.request("POST", W, { body: widget("sc") });
    const s0 = await t.request("GET", `${W}/sc/scale`);
    assert.equal(s0.status, 200, s0.text);
    assert.deepEqual([s0.json.kind, s0.json.apiVersion, s0.json.spec.replicas, s0.json.status.selector], ["Scale", "autoscaling/v1", 1, "widget=sc"]);
    const put = await t.request("PUT", `${W}/sc/scale`, { rawBody: JSON.stringify({ ...s0.json, spec: { replicas: 4 } }), headers: { "content-type": "" } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await t.request("GET", `${W}/sc`)).json.spec.size, 4);
    const patched = await t.request("PATCH", `${W}/sc/scale`, { rawBody: '{"spec":{"replicas":2}}', headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(patched.json.spec.replicas, 2);
    const negative = await t.request("PATCH", `${W}/sc/scale`, { rawBody: '{"spec":{"replicas":-1}}', headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(negative.status, 422);
    const stale = await t.request("PUT", `${W}/sc/scale`, { body: s0.json });
    assert.equal(stale.status, 409, "the Scale's resourceVersion is a precondition");
  });

  test("a namespace with spec.finalizers is Terminating until finalize empties them", async () => {
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "fin-ns" }, spec: { finalizers: ["kubernetes"] } };
    assert.equal((await t.request("POST", "/api/v1/namespaces", { body: ns })).status, 201);
    const del = await t.request("DELETE", "/api/v1/namespaces/fin-ns");
    assert.equal(del.status, 202, del.text);
    assert.equal(del.json.status.phase, "Terminating");
    const blocked = await t.request("POST", "/apis/samples.orch.io/v1/namespaces/fin-ns/widgets", { body: widget("late") });
    assert.equal(blocked.status, 403);
    assert.match(blocked.json.message, /being terminated/);
    const current = (await t.request("GET", "/api/v1/namespaces/fin-ns")).json;
    const fin = await t.request("PUT", "/api/v1/namespaces/fin-ns/finalize", { body: { ...current, spec: { finalizers: [] } } });
    assert.equal(fin.status, 200, fin.text);
    assert.equal((await t.request("GET", "/api/v1/namespaces/fin-ns")).status, 404, "gone once nothing holds it");
  });
});
