// Compressed values on a real etcd: what openStorage writes is the compressed
// form (read back raw with a second, bare client), everything above it sees
// the plain value, and what must stay as it is does.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { VALUE_DICTIONARIES } from "./dictionary.js";
import { ConflictError, TooLargeError } from "./errors.js";
import { openStorage, type OpenedStorage } from "./index.js";
import { nextEvents } from "./testing/storage.case.js";
import { openEtcdStorage, type EtcdStorage } from "./etcd/index.js";
import { etcdSkipReason, startEtcd, type EtcdServer } from "./etcd/testing/etcd-server.js";
import { unreadableReason } from "./unreadable-value.js";
import { MAX_VALUE_BYTES } from "./storage.js";
import { compressedValues } from "./compressed-values.js";
import { TransformedStorage, type StoredForm } from "./transformed-storage.js";

const skip = etcdSkipReason();
const enc = new TextEncoder();
const text = (v: Uint8Array | undefined) => (v === undefined ? undefined : Buffer.from(v).toString());

/** A pod as the controllers and the node agent leave it: what etcd holds most of. */
function pod(name: string): Uint8Array {
  const time = "2026-11-29T10:00:00Z";
  return enc.encode(JSON.stringify({
    apiVersion: "v1", kind: "Pod",
    metadata: {
      name, namespace: "density", uid: "7c6f0903-1958-4735-89ad-40d0186e4f02", creationTimestamp: time,
      labels: { app: "d0", "pod-template-hash": "797bd9f88c" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "d0-797bd9f88c", uid: "7bfb11b2-bae8-4f2a-9c2b-917657f1afdc", controller: true, blockOwnerDeletion: true }],
      managedFields: [
        { manager: "orch-controller-manager", operation: "Update", apiVersion: "v1", time, fieldsType: "FieldsV1", fieldsV1: { "f:metadata": { "f:generateName": {}, "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {} }, "f:ownerReferences": { ".": {}, 'k:{"uid":"7bfb11b2-bae8-4f2a-9c2b-917657f1afdc"}': {} } }, "f:spec": { "f:containers": { 'k:{"name":"c"}': { ".": {}, "f:image": {}, "f:name": {}, "f:resources": { ".": {}, "f:requests": { ".": {}, "f:cpu": {}, "f:memory": {} } } } } } } },
        { manager: "orch-node-agent", operation: "Update", apiVersion: "v1", time, fieldsType: "FieldsV1", subresource: "status", fieldsV1: { "f:status": { "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} } }, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {} } } },
      ],
    },
    spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.6", resources: { requests: { cpu: "10m", memory: "10M" } }, terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", imagePullPolicy: "IfNotPresent" }], restartPolicy: "Always", terminationGracePeriodSeconds: 30, dnsPolicy: "ClusterFirst", serviceAccountName: "default", nodeName: "node-17", schedulerName: "default-scheduler", priority: 0, enableServiceLinks: true, preemptionPolicy: "PreemptLowerPriority", tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }] },
    status: { phase: "Running", conditions: ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: time })), hostIP: "10.0.0.17", podIP: "10.244.17.5", podIPs: [{ ip: "10.244.17.5" }], startTime: time, containerStatuses: [{ name: "c", state: { running: { startedAt: time } }, lastState: {}, ready: true, restartCount: 0, image: "registry.k8s.io/pause:3.6", imageID: "sha256:1", containerID: "containerd://1", started: true }], qosClass: "Burstable" },
  }));
}

describe("compressed values on etcd", { skip }, () => {
  let etcd: EtcdServer;
  let raw: EtcdStorage;
  const opened: OpenedStorage[] = [];
  let prefixes = 0;
  /** A store as the API server opens it, under its own prefix, and the raw client's view of the same keys. */
  async function open(etcdCompression?: boolean): Promise<{ store: OpenedStorage["store"]; rawValue: (key: string) => Promise<Buffer | undefined> }> {
    const prefix = `/compressed-${++prefixes}`;
    const o = await openStorage({ backend: "etcd", dataDir: "", etcdServers: etcd.endpoints, etcdPrefix: prefix, ...(etcdCompression === undefined ? {} : { etcdCompression }) });
    opened.push(o);
    return {
      store: o.store,
      rawValue: async (key) => {
        const kv = (await raw.get(prefix + key)).kv;
        return kv === undefined ? undefined : Buffer.from(kv.value);
      },
    };
  }

  before(async () => {
    etcd = await startEtcd();
    raw = await openEtcdStorage({ endpoints: etcd.endpoints });
  });
  after(async () => {
    for (const o of opened) await o.store.close();
    await raw?.close();
    await etcd?.stop();
  });

  test("a pod is stored near a quarter of its size, and every read, list, watch and conflict gives it back whole", async () => {
    const { store, rawValue } = await open();
    const watch = store.watch("/pods/", { fromRevision: 0 });
    const a = pod("a");
    const created = await store.create("/pods/a", a);
    const stored = (await rawValue("/pods/a"))!;
    assert.deepEqual([...stored.subarray(0, 3)], [0, 0x7a, 1], "header: NUL, z, dictionary 1");
    assert.ok(stored.length * 3 < a.length, `stored ${stored.length} bytes for a ${a.length}-byte pod`);

    const read = (await store.get("/pods/a")).kv!.value;
    assert.equal(text(read), text(a));
    // The watch caches keep values: one must not hold a larger buffer alive (zlib's chunks are 16 KiB).
    assert.ok(read.buffer.byteLength <= Math.max(2 * read.length, Buffer.poolSize), `a ${read.length}-byte value holds ${read.buffer.byteLength} bytes`);
    assert.equal(text((await store.list("/pods/")).items[0]?.value), text(a));
    const b = pod("a-updated");
    await store.update("/pods/a", b, created.modRevision);
    const conflict = await store.update("/pods/a", a, created.modRevision).catch((e: unknown) => e);
    assert.ok(conflict instanceof ConflictError);
    assert.equal(text(conflict.current?.value), text(b), "the conflict carries the winner's plain value");
    const events = await nextEvents(watch, 2);
    assert.deepEqual(events.map((e) => (e.type === "put" ? [text(e.kv.value), text(e.prevKv?.value)] : e.type)), [[text(a), undefined], [text(b), text(a)]]);
    // A delete that loses its compare carries the winner's plain value too (guaranteedUpdate retries from it).
    const lostDelete = await store.delete("/pods/a", { expectedModRevision: created.modRevision }).catch((e: unknown) => e);
    assert.ok(lostDelete instanceof ConflictError);
    assert.equal(text(lostDelete.current?.value), text(b));
    const deleted = await store.delete("/pods/a");
    assert.equal(text(deleted.prevKv.value), text(b));
    watch.close();
  });

  test("small values, encrypted values and values past the size limit are stored as they are", async () => {
    const { store, rawValue } = await open();
    const small = enc.encode(JSON.stringify({ kind: "ConfigMap", metadata: { name: "x" } }));
    await store.create("/small", small);
    assert.equal(text(await rawValue("/small")), text(small));
    // An encrypted value repeats its prefix in every write: compressing it would gain something, and tell the length of secrets.
    const sealed = Buffer.concat([enc.encode("k8s:enc:aescbc:v1:key1:"), Buffer.alloc(400, 7)]);
    await store.create("/sealed", sealed);
    assert.ok((await rawValue("/sealed"))!.equals(sealed));
    assert.ok(Buffer.from((await store.get("/sealed")).kv!.value).equals(sealed));
    // Past the limit the backend refuses the write as it would the plain value, though it would compress small.
    const huge = Buffer.alloc(MAX_VALUE_BYTES + 1, "a");
    await assert.rejects(store.create("/huge", huge), TooLargeError);
  });

  test("a plain value starting with NUL is compressed whatever it gains, so it reads back as written", async () => {
    const { store, rawValue } = await open();
    const nul = Buffer.from([0, 0x7a, 1, 9, 9, 9]);
    await store.create("/nul", nul);
    assert.equal((await rawValue("/nul"))![0], 0);
    assert.ok(Buffer.from((await store.get("/nul")).kv!.value).equals(nul));
  });

  test("with compression off, values are written plain and compressed ones (another server's) still read", async () => {
    const on = await open();
    const p = pod("p");
    await on.store.create("/pods/p", p);
    // The same prefix through a server with --etcd-compression=false.
    const prefix = `/compressed-${prefixes}`;
    const off = await openStorage({ backend: "etcd", dataDir: "", etcdServers: etcd.endpoints, etcdPrefix: prefix, etcdCompression: false });
    opened.push(off);
    assert.equal(text((await off.store.get("/pods/p")).kv?.value), text(p));
    const q = pod("q");
    await off.store.create("/pods/q", q);
    assert.equal(text(await on.rawValue("/pods/q")), text(q), "written plain");
    assert.equal(text((await on.store.get("/pods/q")).kv?.value), text(q), "plain values read with compression on");
  });

  test("a value that does not inflate reads as an unreadable value naming why, and the others still read", async () => {
    const { store } = await open();
    const prefix = `/compressed-${prefixes}`;
    await store.create("/pods/good", pod("good"));
    // Written past the wrapper: a dictionary this version does not have, a damaged stream, and a bomb past the size limit.
    await raw.create(`${prefix}/pods/future`, Buffer.concat([Buffer.from([0, 0x7a, 200]), deflateRawSync(pod("f"))]));
    await raw.create(`${prefix}/pods/damaged`, Buffer.from([0, 0x7a, 1, 0xff, 0xff, 0xff, 0xff]));
    await raw.create(`${prefix}/pods/bomb`, Buffer.concat([Buffer.from([0, 0x7a, 1]), deflateRawSync(Buffer.alloc(MAX_VALUE_BYTES + 1, "{"), { dictionary: VALUE_DICTIONARIES.get(1)! })]));
    const items = new Map((await store.list("/pods/")).items.map((kv) => [kv.key, kv.value]));
    assert.equal(text(items.get("/pods/good")), text(pod("good")));
    assert.match(unreadableReason(items.get("/pods/future")!) ?? "", /dictionary 200, which this version of the server does not have/);
    assert.match(unreadableReason(items.get("/pods/damaged")!) ?? "", /unable to transform key "\/pods\/damaged"/);
    assert.match(unreadableReason(items.get("/pods/bomb")!) ?? "", /unable to transform key "\/pods\/bomb": .*(buffer|length|size)/i);
  });

  test("the wrapped store keeps the backend's progress answer (consistent lists on old etcd read etcd)", async () => {
    const { store } = await open();
    const bare = await openEtcdStorage({ endpoints: etcd.endpoints });
    try {
      assert.equal(typeof store.progressProvable, "function");
      assert.equal(store.progressProvable!(), bare.progressProvable!());
    } finally {
      await bare.close();
    }
  });

  test("a server's own writes come back from etcd (events, reads) without inflating them again; another server's, and later bytes, are inflated", async () => {
    /** Compressed values, counting what is inflated. */
    const counting = (): StoredForm & { opened: number } => {
      const form = compressedValues();
      const c = { opened: 0, seal: form.seal, open: (stored: Uint8Array, key: string) => (c.opened++, form.open(stored, key)) };
      return c;
    };
    const prefix = "/own-writes";
    const [mine, theirs] = [counting(), counting()];
    const one = new TransformedStorage(await openEtcdStorage({ endpoints: etcd.endpoints, prefix }), () => mine);
    const two = new TransformedStorage(await openEtcdStorage({ endpoints: etcd.endpoints, prefix }), () => theirs);
    try {
      // As the watch caches watch: without previous values (those are not the last ones sealed, and are inflated).
      const watch = one.watch("/pods/", { fromRevision: 0, prevKv: false });
      const [a, b, c] = [pod("a"), pod("b"), pod("c")];
      const created = await one.create("/pods/a", a);
      const [ea] = await nextEvents(watch, 1);
      await one.update("/pods/a", b, created.modRevision);
      const [eb] = await nextEvents(watch, 1);
      assert.deepEqual([ea, eb].map((e) => e?.type === "put" && text(e.kv.value)), [text(a), text(b)]);
      assert.equal(mine.opened, 0, "the watch's copies of this server's two writes were not inflated");
      // The other server inflates them; and its write of the key, which ours sees next, is inflated by ours.
      assert.equal(text((await two.get("/pods/a")).kv?.value), text(b));
      assert.equal(theirs.opened, 1);
      await two.update("/pods/a", c, (await two.get("/pods/a")).kv!.modRevision);
      const [ec] = await nextEvents(watch, 1);
      assert.equal(ec?.type === "put" && text(ec.kv.value), text(c), "another server's later value, not ours");
      assert.equal(mine.opened, 1);
      watch.close();
    } finally {
      await one.close();
      await two.close();
    }
  });
});
