// Store formats: new stores (format 2) compress log entries with the
// dictionary they keep in meta; a store written before compression (format 1,
// the fixture below was written by orch at 32c22c8) opens, reads and takes
// writes as it is.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { open } from "lmdb";
import { LmdbStorage } from "./lmdb-storage.js";
import { STORE_DICTIONARY } from "../dictionary.js";
import { unreadableReason } from "../unreadable-value.js";

const FIXTURE = fileURLToPath(new URL("../../../../src/storage/lmdb/testing/format1-store.mdb.gz", import.meta.url));
/** Runs `body` in a fresh folder, removed afterwards whatever happens. */
async function inTempDir(name: string, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `orch-lmdb-${name}-`));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const text = (v: Uint8Array | undefined) => (v === undefined ? undefined : Buffer.from(v).toString("utf8"));

/** A pod-sized JSON value (about 3.5 KB) unlike its neighbours in name and uid. */
function podJson(i: number): Uint8Array {
  const name = `web-5d8f7c9b6d-${i.toString(36).padStart(5, "0")}`;
  const pod = {
    apiVersion: "v1", kind: "Pod",
    metadata: { name, namespace: "density", uid: `0c8f${i.toString(16).padStart(4, "0")}-1a2b-4c3d-8e9f-${(i * 7919).toString(16).padStart(12, "0")}`, labels: { app: "web", "pod-template-hash": "5d8f7c9b6d" },
      managedFields: [{ manager: "orch-controller-manager", operation: "Update", apiVersion: "v1", time: "2026-11-29T06:55:03Z", fieldsType: "FieldsV1", fieldsV1: { "f:metadata": { "f:generateName": {}, "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {} } }, "f:spec": { "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": { ".": {}, "f:requests": { ".": {}, "f:cpu": {}, "f:memory": {} } }, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {} } }, "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {} } } }] },
    spec: { volumes: [{ name: `token-${i}`, projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }, { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }, { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } }], defaultMode: 420 } }],
      containers: [{ name: "web", image: "registry.k8s.io/pause:3.6", resources: { requests: { cpu: "10m", memory: "10Mi" } }, volumeMounts: [{ name: `token-${i}`, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }], terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", imagePullPolicy: "IfNotPresent" }], restartPolicy: "Always", terminationGracePeriodSeconds: 30, dnsPolicy: "ClusterFirst", serviceAccountName: "default", nodeName: `sim-node-${i % 1000}`, securityContext: {}, schedulerName: "default-scheduler", tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }, { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }], priority: 0, enableServiceLinks: true, preemptionPolicy: "PreemptLowerPriority" },
    status: { phase: "Running", conditions: ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-29T06:55:03Z" })), hostIP: `10.0.${i % 250}.1`, podIP: `10.128.${i % 250}.${i % 200}`, podIPs: [{ ip: `10.128.${i % 250}.${i % 200}` }], startTime: "2026-11-29T06:55:03Z", containerStatuses: [{ name: "web", state: { running: { startedAt: "2026-11-29T06:55:04Z" } }, lastState: {}, ready: true, restartCount: 0, image: "registry.k8s.io/pause:3.6", imageID: "", containerID: `containerd://${i.toString(16).padStart(64, "0")}`, started: true }], qosClass: "Burstable" },
  };
  return Buffer.from(JSON.stringify(pod));
}

test("a new store compresses its log with the dictionary it keeps: 2,000 pod-sized values take under half the pages they took uncompressed", async () => {
  await inTempDir("compressed", async (dir) => {
    const store = await LmdbStorage.open({ dataDir: dir });
    const values = Array.from({ length: 2000 }, (_, i) => podJson(i));
    const raw = values.reduce((n, v) => n + v.length, 0);
    assert.ok(raw / values.length > 2800, `values as large as a pod's (${raw / values.length})`);
    await Promise.all(values.map((v, i) => store.create(`/registry/pods/density/p${i}`, v)));
    assert.equal(text((await store.get("/registry/pods/density/p1234")).kv?.value), text(values[1234]), "a value reads back as written");
    assert.equal((await store.list("/registry/pods/density/")).items.length, 2000);
    await store.close();
    // Uncompressed, each value past lmdb's inline limit (about 2 KB) took an overflow page of 4 KB.
    const size = statSync(join(dir, "store.mdb")).size;
    assert.ok(size < values.length * 4096 * 0.5, `store file ${size} bytes for ${values.length} values of ${Math.round(raw / values.length)} bytes`);
    const root = open({ path: join(dir, "store.mdb"), noSubdir: true, maxDbs: 8, encoding: "msgpack", readOnly: true });
    const meta = root.openDB<unknown, string>("meta", {});
    assert.equal(meta.get("format"), "orch-storage/2");
    assert.deepEqual(Buffer.from(meta.get("dictionary") as Uint8Array), STORE_DICTIONARY, "the dictionary is the store's own");
    await root.close();
    // Reopened, it reads with the dictionary it keeps.
    const again = await LmdbStorage.open({ dataDir: dir });
    assert.equal(text((await again.get("/registry/pods/density/p7")).kv?.value), text(values[7]));
    await again.close();
  });
});

test("a store written before compression (format 1) opens, reads its values and takes writes, uncompressed as before", async () => {
  await inTempDir("format1", async (dir) => {
    writeFileSync(join(dir, "store.mdb"), gunzipSync(readFileSync(FIXTURE)), { mode: 0o600 });
    const store = await LmdbStorage.open({ dataDir: dir });
    const list = await store.list("/registry/configmaps/");
    assert.deepEqual(list.items.map((kv) => kv.key), ["/registry/configmaps/default/big", "/registry/configmaps/default/small"], "the deleted key stays deleted");
    const big = JSON.parse(text(list.items[0]!.value)!);
    assert.equal(big.data.text, "orch ".repeat(600), "a 3 KB value written uncompressed reads intact");
    const created = await store.create("/registry/configmaps/default/new", podJson(1));
    await store.close();
    const copy = join(dir, "copy.mdb");
    copyFileSync(join(dir, "store.mdb"), copy);
    const reopened = await LmdbStorage.open({ dataDir: dir });
    assert.equal(text((await reopened.get("/registry/configmaps/default/new")).kv?.value), text(podJson(1)));
    assert.equal((await reopened.get("/registry/configmaps/default/small")).kv?.modRevision, 2);
    assert.equal(created.modRevision, 5, "revisions go on from the ones stored");
    await reopened.close();
    const root = open({ path: copy, noSubdir: true, maxDbs: 8, encoding: "msgpack", readOnly: true });
    assert.equal(root.openDB<unknown, string>("meta", {}).get("format"), "orch-storage/1", "its format is left as it was");
    await root.close();
  });
});

test("a damaged compressed entry reads as a corrupt object, never as an exception: 80 single-byte faults across the file", async () => {
  await inTempDir("damaged", async (dir) => {
    const value = podJson(7);
    const store = await LmdbStorage.open({ dataDir: dir });
    await store.create("/registry/pods/density/victim", value);
    await store.close();
    const file = join(dir, "store.mdb");
    const original = readFileSync(file);
    // Faults spread over the file past its two meta pages (a damaged meta page is another matter: the
    // store does not open, docs/reliability.md); most land in unused space, some in the entry.
    const outcomes = { intact: 0, corrupt: 0 };
    const step = Math.floor((original.length - 8192) / 80);
    for (let i = 0; i < 80; i++) {
      const damaged = Buffer.from(original);
      damaged[8192 + i * step + (i % 7)] ^= 0x5a;
      writeFileSync(file, damaged);
      const reopened = await LmdbStorage.open({ dataDir: dir, log: () => {} });
      try {
        const read = (await reopened.get("/registry/pods/density/victim")).kv!.value;
        if (Buffer.from(read).equals(value)) outcomes.intact++;
        else {
          assert.match(unreadableReason(read) ?? "", /is damaged/, `fault ${i}: a changed value is the corrupt marker, not other bytes`);
          outcomes.corrupt++;
        }
      } finally {
        await reopened.close();
      }
    }
    assert.ok(outcomes.corrupt > 0, `faults in the entry are caught (${JSON.stringify(outcomes)})`);
  });
});
