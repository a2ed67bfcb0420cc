// --etcd-compression from the command line to etcd's bytes: `orch apiserver`
// on a real etcd stores a ConfigMap compressed by default, and a second
// server started with --etcd-compression=false on the same etcd reads it and
// writes its own plain (kubectl 1.33 on both; the bytes read with a bare
// etcd client).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openEtcdStorage, type EtcdStorage } from "../src/storage/etcd/index.js";
import { etcdSkipReason, startEtcd, type EtcdServer } from "../src/storage/etcd/testing/etcd-server.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { skipOrFailInCi } from "./support/skip.js";

const skip = skipOrFailInCi(etcdSkipReason() ?? kubectlSkipReason());
const VALUE = "a line a ConfigMap might hold, long enough to be worth compressing. ".repeat(8);

describe("--etcd-compression", { skip }, () => {
  let etcd: EtcdServer;
  let raw: EtcdStorage;
  const servers: OrchProcess[] = [];
  before(async () => {
    etcd = await startEtcd();
    raw = await openEtcdStorage({ endpoints: etcd.endpoints });
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await raw?.close();
    await etcd?.stop();
  });

  async function server(...flags: string[]): Promise<Kubectl> {
    const s = await startOrch("apiserver", ["--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`, ...flags]);
    servers.push(s);
    return new Kubectl(s.kubeconfig);
  }
  /** The bytes etcd holds for a ConfigMap in default. */
  async function stored(name: string): Promise<Buffer> {
    const kv = (await raw.list("/")).items.find((kv) => kv.key.endsWith(`/configmaps/default/${name}`));
    assert.ok(kv !== undefined, `no key for configmap ${name}`);
    return Buffer.from(kv.value);
  }

  test("on by default: etcd holds the compressed form, kubectl sees the object", async () => {
    const k = await server();
    await k.ok("create", "configmap", "packed", `--from-literal=text=${VALUE}`);
    const bytes = await stored("packed");
    assert.deepEqual([...bytes.subarray(0, 3)], [0, 0x7a, 1]);
    assert.ok(bytes.length < VALUE.length, `${bytes.length} stored bytes for a ${VALUE.length}-character value`);
    assert.equal(JSON.parse(await k.ok("get", "configmap", "packed", "-o", "json")).data.text, VALUE);
  });

  test("=false: the server reads the compressed ConfigMap and stores its own as JSON", async () => {
    const k = await server("--etcd-compression=false");
    assert.equal(JSON.parse(await k.ok("get", "configmap", "packed", "-o", "json")).data.text, VALUE);
    await k.ok("create", "configmap", "plain", `--from-literal=text=${VALUE}`);
    const bytes = await stored("plain");
    assert.equal(JSON.parse(bytes.toString()).data.text, VALUE);
  });
});
