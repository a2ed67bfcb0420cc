// The benchmark's upstream column: how the binary is found or skipped, the
// ratio convention, and (where the binary and etcd are here) that the started
// kube-apiserver answers the bench client as an orch server does.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startUpstream, upstreamBinary } from "./upstream-apiserver.js";
import { ratio } from "./report.js";
import { benchClient, benchPod } from "./http2-client.js";
import { etcdBinary, startEtcd } from "../../src/storage/etcd/testing/etcd-server.js";

describe("bench upstream column", () => {
  it("skips with a reason when no binary is given or the path is not executable", () => {
    const saved = process.env.KUBE_APISERVER_BIN;
    delete process.env.KUBE_APISERVER_BIN;
    try {
      assert.match((upstreamBinary([]) as { skip: string }).skip, /set KUBE_APISERVER_BIN or --upstream=PATH/);
      const dir = mkdtempSync(join(tmpdir(), "upstream-bin-"));
      const file = join(dir, "kube-apiserver");
      writeFileSync(file, "");
      chmodSync(file, 0o644);
      assert.match((upstreamBinary([`--upstream=${file}`]) as { skip: string }).skip, /not an executable file/);
      chmodSync(file, 0o755);
      assert.deepEqual(upstreamBinary([`--upstream=${file}`]), { path: file });
      process.env.KUBE_APISERVER_BIN = file;
      assert.deepEqual(upstreamBinary([]), { path: file });
      rmSync(dir, { recursive: true, force: true });
    } finally {
      if (saved === undefined) delete process.env.KUBE_APISERVER_BIN;
      else process.env.KUBE_APISERVER_BIN = saved;
    }
  });

  it("reads ratios as 'better than upstream' above 1 for throughput and for latency", () => {
    assert.equal(ratio({ name: "x", unit: "req/s", better: "higher" }, 300, 200), 1.5);
    assert.equal(ratio({ name: "x", unit: "ms", better: "lower" }, 10, 20), 2);
    assert.equal(ratio({ name: "x", unit: "ms", better: "lower" }, 40, 20), 0.5);
  });

  it("starts upstream's kube-apiserver on etcd and serves the bench client (create, get, rv=0 get)", async (t) => {
    const bin = upstreamBinary([]);
    if ("skip" in bin) return t.skip(bin.skip);
    if (etcdBinary() === undefined) return t.skip("etcd binary not found");
    const etcd = await startEtcd();
    const server = await startUpstream(bin.path, etcd.endpoints);
    const c = benchClient(server);
    try {
      assert.equal((await c.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "b" } })).status, 201);
      const created = await c.request("POST", "/api/v1/namespaces/b/pods", benchPod("p-1", 1));
      assert.equal(created.status, 201, created.body.toString());
      const got = await c.request("GET", "/api/v1/namespaces/b/pods/p-1");
      assert.equal(got.status, 200);
      assert.equal(JSON.parse(got.body.toString()).metadata.name, "p-1");
      assert.equal((await c.request("GET", "/api/v1/namespaces/b/pods/p-1?resourceVersion=0")).status, 200);
      // The token file is what authenticates: a wrong token gets 401.
      const wrong = await new Promise<number>((resolve) => {
        const s = c.session.request({ ":path": "/api/v1/namespaces/b/pods/p-1", authorization: "Bearer wrong" });
        s.on("response", (h) => resolve(Number(h[":status"])));
        s.resume();
        s.end();
      });
      assert.equal(wrong, 401);
    } finally {
      c.close();
      await server.stop();
      await etcd.stop();
    }
  });
});
