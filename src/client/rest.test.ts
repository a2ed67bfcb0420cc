// The REST client against a real API server over HTTPS (HTTP/2): every verb,
// errors that carry the server's Status unchanged, watches, paging, discovery
// and reconnecting after the session is lost.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createSecureServer } from "node:http2";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { sampleApi } from "../apiserver/testing/sample-api.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { ApiError, type ApiList, type ApiObject, type Status } from "../machinery/index.js";
import { loadKubeconfig } from "./kubeconfig.js";
import { RestClient, retryAfterSeconds, type ResourceRef } from "./rest.js";
import { encodeEnvelope } from "../machinery/codec/protobuf/index.js";
import { builtinRegistry } from "../machinery/codec/protobuf/testing.js";

const WIDGETS: ResourceRef = { group: "samples.orch.io", version: "v1", resource: "widgets", namespaced: true };
const NAMESPACES: ResourceRef = { group: "", version: "v1", resource: "namespaces", namespaced: false };

interface Widget extends ApiObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string };
}

const widget = (name: string, spec: Widget["spec"] = { color: "red" }, labels?: Record<string, string>): Widget => ({
  apiVersion: "samples.orch.io/v1",
  kind: "Widget",
  metadata: { name, namespace: "default", ...(labels ? { labels } : {}) },
  spec,
});

async function rejects(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected the call to fail");
}

describe("RestClient", () => {
  let t: TestServer;
  let client: RestClient;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi], bookmarkIntervalMs: 200 });
    client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
  });
  after(async () => {
    client.close();
    await t.close();
  });

  test("create, get, update, status, merge patch, delete", async () => {
    const created = await client.create(WIDGETS, widget("crud"));
    assert.equal(created.metadata.namespace, "default");
    assert.equal((created as Widget).spec?.size, 1, "server defaults come back");
    const got = await client.get<Widget>(WIDGETS, { namespace: "default", name: "crud" });
    assert.equal(got.metadata.uid, created.metadata.uid);

    const updated = await client.update<Widget>(WIDGETS, { ...got, spec: { ...got.spec, color: "blue" } });
    assert.equal(updated.spec?.color, "blue");
    assert.equal(updated.metadata.generation, 2);
    const status = await client.update<Widget>(WIDGETS, { ...updated, status: { phase: "Ready" } }, { subresource: "status" });
    assert.equal(status.status?.phase, "Ready");

    const patched = await client.patch<Widget>(WIDGETS, { namespace: "default", name: "crud", patch: { metadata: { labels: { a: "b" } } } });
    assert.equal(patched.metadata.labels?.["a"], "b");
    const dry = await client.create(WIDGETS, widget("dry"), { dryRun: true });
    assert.equal(dry.metadata.name, "dry");
    await rejects(client.get(WIDGETS, { namespace: "default", name: "dry" }));

    const meta = await client.get(WIDGETS, { namespace: "default", name: "crud", metadataOnly: true });
    assert.equal(meta.kind, "PartialObjectMetadata");
    assert.equal(meta.metadata.uid, created.metadata.uid);

    const deleted = await client.delete(WIDGETS, { namespace: "default", name: "crud", preconditions: { uid: created.metadata.uid! } });
    assert.equal((deleted as ApiObject).metadata.name, "crud");
    const missing = await rejects(client.get(WIDGETS, { namespace: "default", name: "crud" }));
    assert.equal(missing.code, 404);
  });

  test("errors carry the server's Status unchanged", async () => {
    await client.create(WIDGETS, widget("dup"));
    const dup = await rejects(client.create(WIDGETS, widget("dup")));
    const raw = await t.request("POST", "/apis/samples.orch.io/v1/namespaces/default/widgets", { body: widget("dup") });
    assert.deepEqual(dup.status, raw.json, "the same Status the server sent");
    assert.equal(dup.reason, "AlreadyExists");
    assert.equal(dup.message, 'widgets.samples.orch.io "dup" already exists');

    const invalid = await rejects(client.create(WIDGETS, widget("neg", { size: -1 })));
    assert.equal(invalid.code, 422);
    assert.equal(invalid.status.details?.causes?.[0]?.field, "spec.size");

    const current = await client.get(WIDGETS, { namespace: "default", name: "dup" });
    const stale = await rejects(client.update(WIDGETS, { ...current, metadata: { ...current.metadata, resourceVersion: "1" } }));
    assert.equal(stale.reason, "Conflict");
    // Server-side apply without a fieldManager: upstream's 422 on PatchOptions.
    const badPatch = await rejects(client.patch(WIDGETS, { namespace: "default", name: "dup", patch: {}, type: "apply" }));
    assert.equal(badPatch.code, 422);
    assert.match(badPatch.message, /fieldManager: Required value: is required for apply patch/);

    const unauthorized = new RestClient({ ...client.config, token: "wrong" });
    try {
      const denied = await rejects(unauthorized.list(WIDGETS));
      assert.equal(denied.code, 401);
      assert.equal(denied.reason, "Unauthorized");
    } finally {
      unauthorized.close();
    }
    await assert.rejects(client.get(WIDGETS, { name: "x" }), /namespaced/);
  });

  test("lists: selectors, paging at one version, listAll, deleteCollection", async () => {
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "paging" } });
    for (let i = 0; i < 7; i++) {
      await client.create(WIDGETS, { ...widget(`p${i}`, { color: i < 3 ? "blue" : "green" }, { parity: i % 2 ? "odd" : "even" }), metadata: { name: `p${i}`, namespace: "paging", labels: { parity: i % 2 ? "odd" : "even" } } });
    }
    const first = await client.list<Widget>(WIDGETS, { namespace: "paging", limit: 3 });
    assert.equal(first.kind, "WidgetList");
    assert.deepEqual(first.items.map((w) => w.metadata.name), ["p0", "p1", "p2"]);
    assert.equal(first.metadata.remainingItemCount, 4);
    const second = await client.list<Widget>(WIDGETS, { namespace: "paging", limit: 3, continue: first.metadata.continue! });
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
    assert.deepEqual(second.items.map((w) => w.metadata.name), ["p3", "p4", "p5"]);

    const all = await client.listAll<Widget>(WIDGETS, { namespace: "paging", pageSize: 2 });
    assert.equal(all.items.length, 7);
    assert.equal(all.metadata.continue, undefined);
    const odd = await client.list(WIDGETS, { namespace: "paging", labelSelector: { parity: "odd" } });
    assert.deepEqual(odd.items.map((w) => w.metadata.name), ["p1", "p3", "p5"]);
    const blue = await client.list(WIDGETS, { namespace: "paging", fieldSelector: "spec.color=blue" });
    assert.equal(blue.items.length, 3);
    const everywhere = await client.list(WIDGETS, { fieldSelector: { "metadata.name": "p4" } });
    assert.deepEqual(everywhere.items.map((w) => `${w.metadata.namespace}/${w.metadata.name}`), ["paging/p4"]);
    const meta = await client.list(WIDGETS, { namespace: "paging", metadataOnly: true, limit: 2 });
    assert.equal(meta.kind, "PartialObjectMetadataList");
    assert.equal(meta.items.length, 2);

    const removed = (await client.deleteCollection<Widget>(WIDGETS, { namespace: "paging", labelSelector: "parity=even" })) as ApiList<Widget>;
    assert.deepEqual(removed.items.map((w) => w.metadata.name).sort(), ["p0", "p2", "p4", "p6"]);
    assert.equal((await client.list(WIDGETS, { namespace: "paging" })).items.length, 3);
    const bad = await rejects(client.list(WIDGETS, { namespace: "paging", labelSelector: "a in (" }));
    assert.equal(bad.code, 400);
  });

  test("ownSession: the same server and credentials on a session of its own: closing it leaves this client's watches open", async () => {
    const own = client.ownSession();
    const created = await own.create(WIDGETS, widget("own-session"));
    assert.equal(created.metadata.name, "own-session", "its requests reach the same server with the same credentials");
    const watch = await client.watch<Widget>(WIDGETS, { namespace: "default", resourceVersion: created.metadata.resourceVersion!, fieldSelector: { "metadata.name": "own-session" } });
    const next = watch[Symbol.asyncIterator]();
    own.close(); // on a shared session this would end the watch above
    await client.patch(WIDGETS, { namespace: "default", name: "own-session", patch: { spec: { color: "blue" } } });
    const event = await next.next();
    assert.equal(event.done, false, "the watch on this client's session is still open");
    assert.equal(event.value?.type === "MODIFIED" && event.value.object.spec?.color, "blue");
    watch.close();
    await client.delete(WIDGETS, { namespace: "default", name: "own-session" });
  });

  test("watch: events, bookmarks, resume, refused watches and closing", async () => {
    const base = await client.create(WIDGETS, widget("w1"));
    const watch = await client.watch<Widget>(WIDGETS, {
      namespace: "default",
      resourceVersion: base.metadata.resourceVersion!,
      fieldSelector: { "metadata.name": "w1" },
      allowWatchBookmarks: true,
    });
    const events: string[] = [];
    const done = (async () => {
      for await (const e of watch) {
        events.push(e.type === "BOOKMARK" ? "BOOKMARK" : `${e.type} ${e.object.spec?.color ?? ""}`);
        if (events.includes("DELETED red") && events.includes("BOOKMARK")) break;
      }
    })();
    await client.patch(WIDGETS, { namespace: "default", name: "w1", patch: { spec: { color: "green" } } });
    await client.patch(WIDGETS, { namespace: "default", name: "w1", patch: { spec: { color: "red" } } });
    await client.delete(WIDGETS, { namespace: "default", name: "w1" });
    await done;
    assert.deepEqual(events.filter((e) => e !== "BOOKMARK"), ["MODIFIED green", "MODIFIED red", "DELETED red"]);

    const initial = await client.watch(WIDGETS, { namespace: "default", fieldSelector: "metadata.name=dup" });
    const first = await initial[Symbol.asyncIterator]().next();
    assert.equal(first.value?.type, "ADDED", "unset resourceVersion starts with the current state");
    initial.close();

    const refused = await rejects(client.watch(WIDGETS, { sendInitialEvents: true }));
    assert.equal(refused.code, 400);

    // Aborting ends the iteration quietly.
    const abort = new AbortController();
    const open = await client.watch(WIDGETS, { namespace: "default", resourceVersion: base.metadata.resourceVersion!, signal: abort.signal });
    const drained = (async () => {
      let n = 0;
      for await (const _ of open) n++;
      return n;
    })();
    setTimeout(() => abort.abort(), 50);
    assert.ok((await drained) >= 0);

    const timed = await client.watch(WIDGETS, { namespace: "default", resourceVersion: base.metadata.resourceVersion!, timeoutSeconds: 1, fieldSelector: "metadata.name=none" });
    const started = Date.now();
    for await (const _ of timed) {
      // nothing matches: the server ends the stream at its timeout
    }
    assert.ok(Date.now() - started >= 900, "ended by the server's timeout");
  });

  test("a watch whose start version is gone throws the 410 Expired Status", async () => {
    // Resuming from before a compaction that the watch cache no longer covers: use a server whose window is tiny.
    const small = await startTestServer({ modules: [sampleApi], cacheWindowMs: 20 });
    const c = new RestClient(loadKubeconfig(small.server.kubeconfigPath));
    try {
      const old = await c.create(WIDGETS, widget("old"));
      await c.create(WIDGETS, widget("mid"));
      await new Promise((r) => setTimeout(r, 50));
      await c.create(WIDGETS, widget("new")); // pushes "mid" out of the cache's window
      await small.server.storage.compact(await small.server.storage.currentRevision());
      // The server answers as upstream's watch cache does: the stream's one event is an ERROR with 410.
      const stream = await c.watch(WIDGETS, { resourceVersion: old.metadata.resourceVersion! });
      const err = await rejects((async () => {
        for await (const _ of stream) {
          // no event but the ERROR is expected
        }
      })());
      assert.equal(err.code, 410);
      assert.equal(err.reason, "Expired");
      assert.match(err.message, /too old resource version/);
    } finally {
      c.close();
      await small.close();
    }
  });

  test("discovery lists every resource with its verbs, scope and subresources", async () => {
    const resources = await client.discover();
    const widgets = resources.filter((r) => r.resource === "widgets");
    assert.deepEqual(widgets.map((r) => [r.version, r.preferred]), [["v1", true], ["v1beta1", false]]);
    const w = widgets[0]!;
    assert.equal(w.group, "samples.orch.io");
    assert.equal(w.kind, "Widget");
    assert.equal(w.namespaced, true);
    assert.ok(w.verbs.includes("deletecollection") && w.verbs.includes("watch"));
    assert.ok(w.subresources.some((s) => s.name === "status"));
    const ns = resources.find((r) => r.resource === "namespaces")!;
    assert.equal(ns.namespaced, false);
    assert.equal(ns.group, "");
    assert.deepEqual(ns.shortNames, ["ns"]);
  });

  test("the session comes back after the connection is lost; an interrupted watch throws", async () => {
    // A TCP relay between client and server lets the test cut the connection.
    const sockets = new Set<Socket>();
    const relay = createServer((down) => {
      const up = connect(t.server.port, "127.0.0.1");
      for (const s of [down, up]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => {
          down.destroy();
          up.destroy();
        });
      }
      down.pipe(up).pipe(down);
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    const c = new RestClient({ ...client.config, server: `https://127.0.0.1:${(relay.address() as AddressInfo).port}` });
    try {
      assert.equal((await c.get(NAMESPACES, { name: "default" })).metadata.name, "default");
      const watch = await c.watch(WIDGETS, { namespace: "default", fieldSelector: "metadata.name=none", resourceVersion: "0" });
      const ended = (async () => {
        for await (const _ of watch) {
          // no events: only the cut ends it
        }
      })();
      for (const s of sockets) s.destroy();
      await assert.rejects(ended, "a cut watch fails rather than ending as if the server had closed it");
      assert.equal((await c.get(NAMESPACES, { name: "default" })).metadata.name, "default", "a new session");
    } finally {
      c.close();
      relay.close();
      for (const s of sockets) s.destroy();
    }
  });

  test("raw requests; a dry-run delete keeps the object", async () => {
    const raw = await client.request({ method: "GET", path: "/version" });
    assert.equal(raw.status, 200);
    assert.ok(JSON.parse(raw.body.toString()).gitVersion);
    const status = (await client.delete(WIDGETS, { namespace: "default", name: "dup", dryRun: true })) as ApiObject | Status;
    assert.equal((status as ApiObject).metadata?.name, "dup");
    assert.equal((await client.get(WIDGETS, { namespace: "default", name: "dup" })).metadata.name, "dup");
  });

  test("close() fails the requests still waiting for an answer at once, not at their timeout", async () => {
    const creds = t.server.credentials;
    // A server that never answers.
    const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, () => {});
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const c = new RestClient({ ...client.config, server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}` }, { requestTimeoutMs: 60_000 });
    try {
      const pending = c.list(WIDGETS).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      await new Promise((r) => setTimeout(r, 100)); // let the request reach the server
      const started = Date.now();
      c.close();
      const err = await pending;
      assert.ok(err instanceof Error, "the request fails");
      assert.match(err.message, /closed before an answer|cancel/i);
      assert.ok(Date.now() - started < 2000, "promptly");
    } finally {
      fake.close();
    }
  });

  // A stand-in server: the windows a client advertised are read from the server's side of the session.
  test("the client opens wide HTTP/2 windows (4 MiB per stream, 64 MiB per session), so a busy server's watch does not wait a round trip per 64 KiB", async () => {
    const creds = t.server.credentials;
    let seen: { stream: number; session: number } | undefined;
    const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
      // The client widens the session's window as it connects, before its first request goes out.
      seen = { stream: req.stream.session!.remoteSettings.initialWindowSize!, session: req.stream.session!.state.remoteWindowSize! };
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const c = new RestClient({ ...client.config, server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}` });
    try {
      assert.equal((await c.request({ method: "GET", path: "/version" })).status, 200);
      const windows = seen!;
      assert.equal(windows.stream, 4 * 1024 * 1024, "stream window (HTTP/2's default is 65,535 bytes)");
      assert.ok(windows.session >= 64 * 1024 * 1024 - 65_535, `session window ${windows.session} (HTTP/2's default is 65,535 bytes)`);
    } finally {
      c.close();
      fake.close();
    }
  });

  // A stand-in server: the real one answers 429 only under a load a test cannot hold steady.
  test("a 429 or 5xx with Retry-After is waited out and sent again (client-go's rule), at most 10 times; without one it is not", async () => {
    const creds = t.server.credentials;
    const seen: string[] = [];
    let busy = 0;
    const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const name = req.method === "POST" ? "flaky" : req.url!.split("?")[0]!.split("/").pop()!;
      const answer = (code: number, headers: Record<string, string> = {}) => {
        res.writeHead(code, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `answer ${code}`, code }));
      };
      req.resume();
      req.on("end", () => {
        if (name === "flaky" && busy++ < 2) return answer(busy === 1 ? 429 : 503, { "retry-after": "0" });
        if (name === "always") return answer(429, { "retry-after": "0" });
        if (name === "plain") return answer(500);
        if (name === "slow") return answer(429, { "retry-after": "5" });
        res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
        res.end(JSON.stringify(widget(name)));
      });
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const c = new RestClient({ ...client.config, server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}` });
    try {
      assert.equal((await c.get<Widget>(WIDGETS, { name: "flaky", namespace: "default" })).metadata.name, "flaky");
      assert.equal(seen.length, 3, "a 429 then a 503, each with Retry-After, then the answer");
      seen.length = 0;
      busy = 0;
      // A write is sent again too: a 429 means the server did not serve it.
      assert.equal((await c.create<Widget>(WIDGETS, widget("flaky"), { namespace: "default" })).metadata.name, "flaky");
      assert.deepEqual(seen.map((l) => l.split(" ")[0]), ["POST", "POST", "POST"]);
      seen.length = 0;
      assert.equal((await rejects(c.get(WIDGETS, { name: "always", namespace: "default" }))).code, 429);
      assert.equal(seen.length, 11, "the first request and 10 retries");
      seen.length = 0;
      assert.equal((await rejects(c.get(WIDGETS, { name: "plain", namespace: "default" }))).code, 500);
      assert.equal(seen.length, 1, "no Retry-After: not sent again");
      // The wait honours the caller's abort.
      const started = Date.now();
      await assert.rejects(c.get(WIDGETS, { name: "slow", namespace: "default", signal: AbortSignal.timeout(200) }));
      assert.ok(Date.now() - started < 3000, "aborted during the 5 s wait");
    } finally {
      c.close();
      fake.close();
    }
  });

  test("ERROR events and answers without a Status body", async () => {
    const creds = t.server.credentials;
    const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
      if (req.url?.includes("watch=1")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(JSON.stringify({ type: "ADDED", object: widget("x") }) + "\n");
        const status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "too old resource version: 1 (5)", reason: "Expired", code: 410 };
        res.end(JSON.stringify({ type: "ERROR", object: status }) + "\n");
      } else {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end("upstream connect error");
      }
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const c = new RestClient({ ...client.config, server: `https://127.0.0.1:${(fake.address() as AddressInfo).port}` });
    try {
      const watch = await c.watch(WIDGETS);
      const seen: string[] = [];
      const err = await rejects((async () => {
        for await (const e of watch) seen.push(e.type);
      })());
      assert.deepEqual(seen, ["ADDED"]);
      assert.equal(err.code, 410);
      assert.equal(err.message, "too old resource version: 1 (5)");
      const plain = await rejects(c.list(WIDGETS));
      assert.equal(plain.code, 502);
      assert.equal(plain.message, "upstream connect error");
    } finally {
      c.close();
      fake.close();
    }
  });

  test("Protobuf answers: decoded with schemas; rejected without the magic prefix (seed 000, \"Protobuf envelope\")", async () => {
    const schemas = builtinRegistry();
    const lookupType = (apiVersion: string, kind: string) => (apiVersion === "v1" ? `io.k8s.api.core.v1.${kind}` : undefined);
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "default" }, data: { a: "1" } };
    const good = Buffer.from(encodeEnvelope(configMap, "io.k8s.api.core.v1.ConfigMap", schemas));
    const creds = t.server.credentials;
    let accept = "";
    const fake = createSecureServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (req, res) => {
      accept = String(req.headers.accept);
      res.writeHead(200, { "content-type": "application/vnd.kubernetes.protobuf" });
      res.end(req.url?.includes("/good") ? good : good.subarray(4));
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const server = `https://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const c = new RestClient({ ...client.config, server }, { protobuf: { schemas, lookupType } });
    const plain = new RestClient({ ...client.config, server });
    const CONFIGMAPS: ResourceRef = { group: "", version: "v1", resource: "configmaps", namespaced: true };
    try {
      assert.deepEqual(await c.get(CONFIGMAPS, { namespace: "default", name: "good" }), configMap);
      assert.equal(accept, "application/vnd.kubernetes.protobuf, application/json");
      await assert.rejects(c.get(CONFIGMAPS, { namespace: "default", name: "bad" }), /lacks the prefix 6b 38 73 00/);
      await assert.rejects(plain.get(CONFIGMAPS, { namespace: "default", name: "bad" }), /lacks the prefix 6b 38 73 00/);
      await assert.rejects(plain.get(CONFIGMAPS, { namespace: "default", name: "good" }), /did not ask for/);
    } finally {
      c.close();
      plain.close();
      fake.close();
    }
  });
});

test("retryAfterSeconds: 429 and 5xx with whole seconds only", () => {
  assert.equal(retryAfterSeconds(429, { "retry-after": "1" }), 1);
  assert.equal(retryAfterSeconds(503, { "retry-after": "0" }), 0);
  assert.equal(retryAfterSeconds(500, {}), undefined);
  assert.equal(retryAfterSeconds(409, { "retry-after": "1" }), undefined);
  assert.equal(retryAfterSeconds(429, { "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }), undefined);
  assert.equal(retryAfterSeconds(429, { "retry-after": "-1" }), undefined);
});
