// The node status manager against a real in-process API server: a node that
// registers NotReady turns Ready within a fraction of a second once its
// signals do, not a whole nodeStatusUpdateFrequency later; after that the
// normal period applies.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { namingFor } from "../../api/naming.js";
import type { Node } from "../../api/core/types.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { RestClient, loadKubeconfig } from "../../client/index.js";
import { eventually } from "../../controllers/testing.js";
import { NODES, NodeStatusManager, type NodeFacts, type Signals } from "./node-status.js";

let t: TestServer;
let client: RestClient;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
  client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
});
after(async () => {
  client.close();
  await t.close();
});

const facts = (nodeName: string): NodeFacts => ({
  nodeName, hostname: nodeName, internalIP: "10.0.0.1", cpu: 2, memoryBytes: 4 << 30, ephemeralStorageBytes: 20 << 30, maxPods: 110,
  evictionHard: {}, runtimeVersion: "test://1", agentVersion: "v0", port: 10250, declaredFeatures: [],
});

function signals(runtimeOk: () => boolean): () => Promise<Signals> {
  return async () => ({
    memoryAvailableBytes: 2 << 30, memoryTotalBytes: 4 << 30,
    fs: { capacityBytes: 20 << 30, availableBytes: 10 << 30, inodes: 1e6, inodesFree: 5e5 },
    pids: { max: 1e5, running: 100 },
    runtimeReady: { ok: runtimeOk(), message: "runtime not ready yet" },
    networkReady: { ok: true, message: "" },
    pleg: { ok: true, message: "" },
  });
}

const ready = async (name: string) => ((await client.get<Node>(NODES, { name })).status?.conditions ?? []).find((c) => c.type === "Ready")?.status;

test("a node registered NotReady is reported Ready as soon as its signals are, not a status period later", async () => {
  let runtimeOk = false;
  const abort = new AbortController();
  const m = new NodeStatusManager({ client, naming: namingFor(), facts: () => facts("fast"), signals: signals(() => runtimeOk), updateFrequencyMs: 60_000, reportFrequencyMs: 300_000 });
  try {
    await m.register();
    assert.equal(await ready("fast"), "False");
    void m.run(abort.signal);
    runtimeOk = true;
    const t0 = Date.now();
    await eventually("Ready=True", async () => ((await ready("fast")) === "True" ? true : undefined), 5000);
    assert.ok(Date.now() - t0 < 2000, `Ready after ${Date.now() - t0} ms with a 60 s status period`);
    // Once Ready, the normal period: a later change waits for it.
    runtimeOk = false;
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await ready("fast"), "True", "no fast updates after the first Ready");
  } finally {
    abort.abort();
  }
});
