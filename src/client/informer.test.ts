// Informers against a real API server: paged initial sync, handlers,
// late handlers, resync, indexes, a relist after the server's history is gone (410), backoff
// when the server keeps failing, and stopping on the signal.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createSecureServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { sampleApi } from "../apiserver/testing/sample-api.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import type { ApiObject } from "../machinery/index.js";
import { Informer, keyOf, splitKey } from "./informer.js";
import { InformerFactory } from "./informer-factory.js";
import { loadKubeconfig } from "./kubeconfig.js";
import { RestClient, type ResourceRef } from "./rest.js";

const WIDGETS: ResourceRef = { group: "samples.orch.io", version: "v1", resource: "widgets", namespaced: true };
const NAMESPACES: ResourceRef = { group: "", version: "v1", resource: "namespaces", namespaced: false };

interface Widget extends ApiObject {
  spec?: { color?: string };
}

const widget = (namespace: string, name: string, color = "red"): Widget => ({
  apiVersion: "samples.orch.io/v1",
  kind: "Widget",
  metadata: { name, namespace },
  spec: { color },
});

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("keyOf and splitKey", () => {
  assert.equal(keyOf({ metadata: { namespace: "ns", name: "a" } }), "ns/a");
  assert.equal(keyOf({ metadata: { name: "node-1" } }), "node-1");
  assert.deepEqual(splitKey("ns/a"), { namespace: "ns", name: "a" });
  assert.deepEqual(splitKey("node-1"), { name: "node-1" });
});

describe("Informer", () => {
  let t: TestServer;
  let client: RestClient;
  before(async () => {
    // A tiny cache window: resuming from an old version goes to the store's history, which compaction removes.
    t = await startTestServer({ modules: [sampleApi], cacheWindowMs: 50 });
    client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
    for (const ns of ["inf", "other", "relist"]) await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  });
  after(async () => {
    client.close();
    await t.close();
  });

  test("syncs with a paged list, then add, update and delete reach the handlers and the cache", async () => {
    for (let i = 0; i < 5; i++) await client.create(WIDGETS, widget("inf", `w${i}`));
    await client.create(WIDGETS, widget("other", "elsewhere"));
    const informer = new Informer<Widget>({ client, resource: WIDGETS, namespace: "inf", pageSize: 2 });
    const events: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => events.push(`add ${o.metadata.name}`),
      onUpdate: (a, b) => events.push(`update ${a.spec?.color}->${b.spec?.color}`),
      onDelete: (o) => events.push(`delete ${o.metadata.name}`),
    });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    assert.equal(await informer.waitForSync(), true);
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(informer.keys().sort(), ["inf/w0", "inf/w1", "inf/w2", "inf/w3", "inf/w4"]);
    assert.equal(informer.listCount, 1);
    assert.equal(events.length, 5);
    events.length = 0;

    await client.create(WIDGETS, widget("inf", "new"));
    await client.patch(WIDGETS, { namespace: "inf", name: "w0", patch: { spec: { color: "blue" } } });
    await client.delete(WIDGETS, { namespace: "inf", name: "w1" });
    await client.create(WIDGETS, widget("other", "not-mine"));
    await until("three events", () => events.length >= 3);
    assert.deepEqual(events, ["add new", "update red->blue", "delete w1"]);
    assert.equal(informer.get("inf/w0")?.spec?.color, "blue");
    assert.equal(informer.get("inf/w1"), undefined);

    // A handler added late first sees what is already there.
    const late: string[] = [];
    informer.addEventHandler({ onAdd: (o) => late.push(o.metadata.name!) });
    assert.equal(late.length, 5);

    stop.abort();
    await running;
    assert.equal(informer.listCount, 1, "no relist while the watch was healthy");
  });

  test("lists again after a 410 Gone when the history it would resume from is compacted", async () => {
    await client.create(WIDGETS, widget("relist", "before"));
    // The server ends the watch within 1–2 s; the informer resumes from its last version, which by then is gone.
    const lines: string[] = [];
    const informer = new Informer<Widget>({ client, resource: WIDGETS, namespace: "relist", watchTimeoutSeconds: 2, log: (l) => lines.push(l) });
    const deleted: string[] = [];
    informer.addEventHandler({ onDelete: (o) => deleted.push(o.metadata.name!) });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await informer.waitForSync();
    assert.equal(informer.listCount, 1);

    // Events in another namespace move the store on without moving this informer's version; then compact.
    await client.create(WIDGETS, widget("other", "r1"));
    await new Promise((r) => setTimeout(r, 80));
    await client.create(WIDGETS, widget("other", "r2"));
    await t.server.storage.compact(await t.server.storage.currentRevision());

    await until("a relist", () => informer.listCount >= 2, 6000);
    assert.deepEqual(informer.keys(), ["relist/before"]);
    await client.create(WIDGETS, widget("relist", "after"));
    await until("the watch after the relist", () => informer.get("relist/after") !== undefined);
    stop.abort();
    await running;
    assert.deepEqual(deleted, []);
    assert.ok(lines.some((l) => /informer widgets.samples.orch.io: watch from \d+ expired \(too old resource version/.test(l)), lines.join("\n"));
  });

  test("resync hands every cached object to onUpdate again (old === new) on each handler's own period, without listing", async () => {
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "resync" } });
    for (const n of ["r1", "r2"]) await client.create(WIDGETS, widget("resync", n));
    const informer = new Informer<Widget>({ client, resource: WIDGETS, namespace: "resync", resyncPeriodMs: 100 });
    const resynced = new Map<string, number>();
    let notSame = 0;
    informer.addEventHandler({
      onUpdate: (a, b) => {
        if (a !== b) notSame++;
        resynced.set(b.metadata.name!, (resynced.get(b.metadata.name!) ?? 0) + 1);
      },
    });
    const quiet: string[] = [];
    informer.addEventHandler({ onUpdate: (_a, b) => quiet.push(b.metadata.name!) }, { resyncPeriodMs: 0 });
    assert.throws(() => informer.addEventHandler({}, { resyncPeriodMs: -1 }), /resyncPeriodMs must be a number of ms from 0 to 2147483647, not -1/);
    assert.throws(() => informer.addEventHandler({}, { resyncPeriodMs: 30 * 86_400_000 }), /resyncPeriodMs must be a number of ms from 0/, "longer than a Node timer can wait");
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await until("two resyncs of both objects", () => (resynced.get("r1") ?? 0) >= 2 && (resynced.get("r2") ?? 0) >= 2);
    assert.equal(notSame, 0, "a resync delivers the cached object as both old and new");
    assert.deepEqual(quiet, [], "a handler that opted out gets no resync");
    // A handler added later with its own, shorter period.
    const late = new Set<string>();
    informer.addEventHandler({ onUpdate: (_a, b) => late.add(b.metadata.name!) }, { resyncPeriodMs: 50 });
    await until("the late handler's resync", () => late.size === 2);
    assert.equal(informer.listCount, 1, "resync replays the cache; it does not list");
    stop.abort();
    await running;
    const after = resynced.get("r1");
    await new Promise((r) => setTimeout(r, 250)); // proving an absence needs a wait: 2.5 periods
    assert.equal(resynced.get("r1"), after, "no resync once stopped");
  });

  test("indexes follow adds, updates that move an object between values, and deletes from the watch", async () => {
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "idx" } });
    await client.create(WIDGETS, widget("idx", "a", "red"));
    await client.create(WIDGETS, widget("inf", "elsewhere", "red"));
    const informer = new Informer<Widget>({ client, resource: WIDGETS });
    const byColor = (w: Widget) => (w.spec?.color ? [w.spec.color] : []);
    informer.addIndexers({ color: byColor });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await informer.waitForSync();
    assert.deepEqual(informer.indexKeys("namespace", "idx"), ["idx/a"]);
    assert.ok(informer.indexKeys("color", "red").includes("inf/elsewhere"));

    await client.create(WIDGETS, widget("idx", "b", "green"));
    await client.patch(WIDGETS, { namespace: "idx", name: "a", patch: { spec: { color: "blue" } } });
    await until("the move", () => informer.indexKeys("color", "blue").includes("idx/a"));
    assert.ok(!informer.indexKeys("color", "red").includes("idx/a"), "moved out of its old value");
    assert.deepEqual(informer.byIndex("color", "green").map((w) => w.metadata.name), ["b"]);
    assert.equal(informer.byIndex("color", "blue")[0]?.spec?.color, "blue");
    informer.addIndexers({ color: byColor }); // a second controller asking for the same index
    assert.throws(() => informer.addIndexers({ color: (w) => [w.metadata.name!] }), /indexer conflict/);

    await client.delete(WIDGETS, { namespace: "idx", name: "b" });
    await until("the delete", () => informer.get("idx/b") === undefined);
    assert.deepEqual(informer.byIndex("color", "green"), []);
    assert.deepEqual(informer.indexKeys("namespace", "idx"), ["idx/a"]);
    stop.abort();
    await running;
  });

  test("the factory shares one informer per resource and scope; a metadata-only request gets the full informer once there is one", async () => {
    const factory = new InformerFactory({ client });
    const meta = factory.informerFor({ resource: WIDGETS, metadataOnly: true });
    const a = factory.informerFor({ resource: WIDGETS });
    const b = factory.informerFor({ resource: WIDGETS });
    assert.equal(a, b);
    assert.notEqual(a, meta, "asked for before the full one: an informer of its own");
    assert.equal(factory.informerFor({ resource: WIDGETS, metadataOnly: true }), a, "asked for after it: the full informer, whose objects carry all the metadata");
    const stop = new AbortController();
    factory.start(stop.signal);
    assert.equal(await factory.waitForSync(), true);
    const later = factory.informerFor({ resource: NAMESPACES });
    assert.equal(await later.waitForSync(), true, "an informer asked for after start runs at once");
    assert.ok(later.get("inf"));
    const m = meta.list()[0]!;
    assert.equal(m.kind, "PartialObjectMetadata");
    assert.ok(m.metadata.uid);
    stop.abort();
  });

  test("the factory's caches hold objects without managedFields unless asked to keep them; a plain informer keeps them", async () => {
    await client.create(WIDGETS, widget("inf", "managed", "red"));
    const stop = new AbortController();
    const trimmed = new InformerFactory({ client }).informerFor<Widget>({ resource: WIDGETS });
    const kept = new InformerFactory({ client, keepManagedFields: true }).informerFor<Widget>({ resource: WIDGETS });
    const plain = new Informer<Widget>({ client, resource: WIDGETS });
    const runs = [trimmed, kept, plain].map((i) => i.run(stop.signal));
    for (const i of [trimmed, kept, plain]) await i.waitForSync();
    assert.equal(trimmed.get("inf/managed")?.metadata.managedFields, undefined);
    assert.ok((kept.get("inf/managed")?.metadata.managedFields?.length ?? 0) > 0);
    assert.ok((plain.get("inf/managed")?.metadata.managedFields?.length ?? 0) > 0);
    // Objects from the watch too, not only from the list.
    const seen: Widget[] = [];
    trimmed.addEventHandler({ onUpdate: (_o, n) => void seen.push(n) });
    await client.patch(WIDGETS, { namespace: "inf", name: "managed", patch: { spec: { color: "blue" } } });
    await until("the update", () => seen.some((w) => w.spec?.color === "blue"));
    assert.equal(seen.find((w) => w.spec?.color === "blue")?.metadata.managedFields, undefined);
    stop.abort();
    await Promise.all(runs);
  });

  test("the factory's defaults.resyncPeriodMs is every informer's resync period (upstream's defaultResync)", async () => {
    const factory = new InformerFactory({ client, defaults: { resyncPeriodMs: 50 } });
    const namespaces = factory.informerFor({ resource: NAMESPACES });
    let resyncs = 0;
    namespaces.addEventHandler({ onUpdate: (a, b) => void (a === b && resyncs++) });
    const stop = new AbortController();
    factory.start(stop.signal);
    await until("a resync", () => resyncs > 0);
    stop.abort();
  });

  test("views share the parent's caches; a view's handlers end with its run, the informers go on for the next", async () => {
    const parent = new InformerFactory({ client });
    const process = new AbortController();
    parent.start(process.signal);
    const firstTerm = new AbortController();
    const view = parent.view();
    const widgets = view.informerFor<Widget>({ resource: WIDGETS, namespace: "inf" });
    assert.equal(view.informerFor({ resource: WIDGETS, namespace: "inf" }), widgets, "a view hands out one informer per resource too");
    const seen: string[] = [];
    widgets.addEventHandler({ onAdd: (w) => void seen.push(`first ${w.metadata.name}`) });
    view.start(firstTerm.signal);
    assert.equal(await view.waitForSync(), true);
    const underlying = parent.informerFor<Widget>({ resource: WIDGETS, namespace: "inf" });
    assert.equal(widgets.list().length, underlying.list().length, "the view reads the parent's cache");
    await client.create(WIDGETS, widget("inf", "view-a"), { namespace: "inf" });
    await until("the first term's handler sees view-a", () => seen.includes("first view-a"));

    firstTerm.abort();
    const secondTerm = new AbortController();
    const next = parent.view();
    const again = next.informerFor<Widget>({ resource: WIDGETS, namespace: "inf" });
    // A handler added to a synced informer gets the cached objects first: the next term starts from the cache, no relist.
    const lists = underlying.listCount;
    again.addEventHandler({ onAdd: (w) => void seen.push(`second ${w.metadata.name}`) });
    next.start(secondTerm.signal);
    assert.ok(seen.includes("second view-a"), "the next term sees what is cached at once");
    await client.create(WIDGETS, widget("inf", "view-b"), { namespace: "inf" });
    await until("the second term's handler sees view-b", () => seen.includes("second view-b"));
    assert.ok(!seen.includes("first view-b"), "the ended term's handler was removed");
    assert.equal(underlying.listCount, lists, "the informer kept running across terms");
    secondTerm.abort();
    process.abort();
  });
});

test("a server that keeps failing gets backoff, not a flood, and the informer stops on its signal", async () => {
  const t = await startTestServer({ modules: [sampleApi] });
  const creds = t.server.credentials;
  let lists = 0;
  let watches = 0;
  const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
    if (req.url?.includes("watch=1")) {
      watches++;
      // Accept the watch and end it at once: a server in trouble.
      res.writeHead(200, { "content-type": "application/json" });
      res.end();
      return;
    }
    lists++;
    const body = JSON.stringify({ kind: "WidgetList", apiVersion: "samples.orch.io/v1", metadata: { resourceVersion: "5" }, items: [] });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
  const client = new RestClient({ server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}`, ca: creds.caCertPem, token: "x" });
  try {
    const informer = new Informer({ client, resource: WIDGETS, initialBackoffMs: 50, maxBackoffMs: 400 });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await new Promise((r) => setTimeout(r, 1200));
    stop.abort();
    await running;
    assert.equal(lists, 1);
    // Without backoff this would be hundreds; with 50, 100, 200, 400, 400... (+ jitter) it is a handful.
    assert.ok(watches >= 3 && watches <= 8, `${watches} watches in 1.2 s`);
  } finally {
    client.close();
    fake.close();
    await t.close();
  }
});

test("a relist tells the handlers about objects deleted while the informer was not watching", async () => {
  const t = await startTestServer({ modules: [sampleApi] });
  const creds = t.server.credentials;
  let lists = 0;
  const item = (name: string, rv: string) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name, namespace: "ns", uid: name, resourceVersion: rv } });
  const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
    if (req.url?.includes("watch=1")) {
      // The first watch is refused as too old: the informer must list again.
      const status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "too old resource version: 5 (9)", reason: "Expired", code: 410 };
      res.writeHead(lists === 1 ? 410 : 200, { "content-type": "application/json" });
      if (lists === 1) res.end(JSON.stringify(status));
      return; // later watches stay open
    }
    lists++;
    const items = lists === 1 ? [item("a", "3"), item("b", "4")] : [item("a", "7")];
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "WidgetList", apiVersion: "samples.orch.io/v1", metadata: { resourceVersion: lists === 1 ? "5" : "9" }, items }));
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
  const client = new RestClient({ server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}`, ca: creds.caCertPem });
  try {
    const informer = new Informer({ client, resource: WIDGETS });
    const events: string[] = [];
    const byVersion = (o: ApiObject) => [o.metadata.resourceVersion!];
    informer.addIndexers({ version: byVersion });
    let indexedAtFirstList: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => {
        events.push(`add ${o.metadata.name}`);
        if (events.length === 2) indexedAtFirstList = informer.indexKeys("version", "4");
      },
      onUpdate: (_, o) => events.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`),
      onDelete: (o) => events.push(`delete ${o.metadata.name}`),
    });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await until("the relist", () => events.length >= 4);
    assert.deepEqual(events, ["add a", "add b", "update a@7", "delete b"]);
    assert.deepEqual(indexedAtFirstList, ["ns/b"], "an object is indexed before its handlers run");
    // The relist after 410 replaced the cache, and the indexes with it.
    assert.deepEqual(informer.indexKeys("version", "3"), [], "a moved by the relist");
    assert.deepEqual(informer.indexKeys("version", "7"), ["ns/a"]);
    assert.deepEqual(informer.indexKeys("version", "4"), [], "b deleted by the relist");
    assert.deepEqual(informer.indexKeys("namespace", "ns"), ["ns/a"]);
    assert.equal(informer.lastSyncResourceVersion, "9");
    assert.equal(lists, 2, "one relist, at once");
    stop.abort();
    await running;
  } finally {
    client.close();
    fake.close();
    await t.close();
  }
});

test("a watch that brings neither events nor bookmarks is restarted from the last version (no silent stalls)", async () => {
  const t = await startTestServer({ modules: [sampleApi] });
  const creds = t.server.credentials;
  const watchVersions: string[] = [];
  const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
    if (req.url?.includes("watch=1")) {
      watchVersions.push(new URL(req.url, "https://x").searchParams.get("resourceVersion") ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      if (watchVersions.length === 1) res.write(JSON.stringify({ type: "BOOKMARK", object: { kind: "Widget", apiVersion: "samples.orch.io/v1", metadata: { resourceVersion: "8" } } }) + "\n");
      return; // then silence, connection open: a stall
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "WidgetList", apiVersion: "samples.orch.io/v1", metadata: { resourceVersion: "5" }, items: [] }));
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
  const client = new RestClient({ server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}`, ca: creds.caCertPem });
  try {
    const informer = new Informer({ client, resource: WIDGETS, stallTimeoutMs: 200 });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await until("two restarts", () => watchVersions.length >= 3);
    stop.abort();
    await running;
    assert.deepEqual(watchVersions.slice(0, 3), ["5", "8", "8"], "resumed from the bookmark's version, without a relist");
    assert.ok(informer.stallCount >= 2);
    assert.equal(informer.listCount, 1);
  } finally {
    client.close();
    fake.close();
    await t.close();
  }
});

test("lists come from the server's cache as client-go's do: at any version first, then not older than the last seen, consistent only when that version is gone", async () => {
  const t = await startTestServer({ modules: [sampleApi] });
  const creds = t.server.credentials;
  const lists: string[] = [];
  const logs: string[] = [];
  const item = (name: string, rv: string) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name, namespace: "ns", uid: name, resourceVersion: rv } });
  const list = (rv: string, items: unknown[]) => JSON.stringify({ kind: "WidgetList", apiVersion: "samples.orch.io/v1", metadata: { resourceVersion: rv }, items });
  const expired = JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "too old resource version: 10 (15)", reason: "Expired", code: 410 });
  const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
    const q = new URL(req.url ?? "/", "https://x").searchParams;
    if (q.get("watch") === "1") {
      if (lists.length === 1) {
        // The watch from the first list's version is refused: history has moved on.
        res.writeHead(410, { "content-type": "application/json" });
        res.end(expired);
      } else res.writeHead(200, { "content-type": "application/json" }); // stays open
      return;
    }
    lists.push(`rv=${q.get("resourceVersion") ?? "(none)"} match=${q.get("resourceVersionMatch") ?? "(none)"}`);
    res.writeHead(lists.length === 2 ? 410 : 200, { "content-type": "application/json" });
    if (lists.length === 1) res.end(list("10", [item("a", "10")]));
    else if (lists.length === 2) res.end(expired); // not older than 10: also gone
    else res.end(list("20", [item("a", "10"), item("b", "20")]));
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
  const client = new RestClient({ server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}`, ca: creds.caCertPem, token: "x" });
  const stop = new AbortController();
  try {
    const informer = new Informer({ client, resource: WIDGETS, initialBackoffMs: 10, maxBackoffMs: 50, log: (l) => logs.push(l) });
    const running = informer.run(stop.signal);
    await until("the consistent list's objects", () => informer.get("ns/b") !== undefined);
    assert.deepEqual(lists, ["rv=0 match=(none)", "rv=10 match=NotOlderThan", "rv=(none) match=(none)"], logs.join("; "));
    stop.abort();
    await running;
  } finally {
    stop.abort();
    client.close();
    fake.close();
    await t.close();
  }
});
