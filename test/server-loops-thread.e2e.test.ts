// End to end: `orch server --control-loops-thread` (src/cli/server-loops-thread.ts).
// With the flag on, the controller manager and the scheduler run on a second
// thread of the process; off, on the API server's. Either way a Deployment's
// pods must be created, scheduled onto simulated nodes and counted Ready, both
// leases taken and given back at a clean stop. The default follows the store:
// on with etcd, off on the embedded store.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { RestClient, loadKubeconfig } from "../src/client/index.js";
import type { Lease } from "../src/api/coordination/types.js";
import type { Deployment } from "../src/api/apps/types.js";
import { DEPLOYMENTS, leaseResource } from "../src/api/resource-refs.js";
import { namingFor } from "../src/machinery/naming.js";
import { eventually } from "../src/controllers/testing.js";
import { etcdSkipReason, startEtcd } from "../src/storage/etcd/testing/etcd-server.js";
import { startOrch } from "./support/orch-process.js";
import { startSimulator } from "./support/simulator.js";
import { deploymentYaml } from "./support/manifests.js";
import { parse } from "yaml";

const ON_THREAD = /orch server ready: .*; control loops on their own thread/;
const READY = /orch server ready: /;

/** Starts a server with `args`, runs a 4-replica Deployment on 2 simulated nodes, stops it; returns the server's output. */
async function runDeployment(args: string[]): Promise<string> {
  const orch = await startOrch("server", ["--disable-agent", "--disable-dns", ...args]);
  const client = new RestClient(loadKubeconfig(orch.kubeconfig));
  const sim = await startSimulator(["--count", "2", "--kubeconfig", orch.kubeconfig, "--name-prefix", "thread-"]);
  try {
    await client.create(DEPLOYMENTS, { ...(parse(deploymentYaml("loops", 4, "nginx:1.27")) as Deployment), metadata: { name: "loops", namespace: "default" } });
    await eventually("4 of the Deployment's pods Ready", async () => {
      const d = await client.get<Deployment>(DEPLOYMENTS, { namespace: "default", name: "loops" });
      return d.status?.readyReplicas === 4;
    }, 60_000);
    const leases = leaseResource(namingFor());
    for (const name of ["orch-controller-manager", "orch-scheduler"]) {
      const lease = await client.get<Lease>(leases, { namespace: "orch-system", name });
      assert.match(lease.spec?.holderIdentity ?? "", /_orch-server-/, `${name} is held by the server`);
    }
  } finally {
    await sim.stop();
    client.close();
    await orch.stop();
  }
  const output = orch.output();
  assert.match(output, /released lease orch-system\/orch-controller-manager/, "a clean stop gives the controller manager's lease back");
  assert.match(output, /released lease orch-system\/orch-scheduler/, "and the scheduler's");
  assert.match(output, /orch server: stopped/);
  return output;
}

describe("orch server --control-loops-thread", { timeout: 240_000 }, () => {
  test("on: the loops run on their own thread and a Deployment's pods get created, scheduled and Ready", async () => {
    const output = await runDeployment(["--control-loops-thread=true"]);
    assert.match(output, ON_THREAD);
    assert.doesNotMatch(output, /control loops' thread exited/);
  });

  test("off: the same on the API server's thread", async () => {
    const output = await runDeployment(["--control-loops-thread=false"]);
    assert.match(output, READY);
    assert.doesNotMatch(output, ON_THREAD);
  });

  describe("the default follows the store", () => {
    const stops: (() => Promise<void>)[] = [];
    after(async () => {
      for (const stop of stops.reverse()) await stop();
    });

    test("embedded store: on the API server's thread", async () => {
      const orch = await startOrch("server", ["--disable-agent", "--disable-dns"]);
      stops.push(() => orch.stop());
      assert.match(orch.output(), READY);
      assert.doesNotMatch(orch.output(), ON_THREAD);
    });

    test("etcd: on their own thread", { skip: etcdSkipReason() ?? false }, async () => {
      const etcd = await startEtcd();
      stops.push(() => etcd.stop());
      const orch = await startOrch("server", ["--disable-agent", "--disable-dns", "--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`]);
      stops.push(() => orch.stop());
      assert.match(orch.output(), ON_THREAD);
    });
  });
});
