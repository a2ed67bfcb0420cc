// End to end: `orch server` frozen (SIGSTOP) past its leases' renew deadline.
// On SIGCONT its controller manager and scheduler find they could not renew in
// time and stop leading, as upstream's do; upstream's separate processes then
// exit and are restarted by their supervisor, and the server is that
// supervisor here: both must campaign again, take their leases back and work
// (a ReplicaSet gets its pod, the pod gets a node). Before this, a server
// frozen or starved for 10 s kept answering with no scheduler at all.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { sleep } from "../src/machinery/until.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const skip = kubectlSkipReason() ?? (process.getuid?.() === 0 ? undefined : "not root: the node agent's containers need root");
const files = mkdtempSync(join(tmpdir(), "orch-e2e-leases-"));
const TOKEN = String(600_000 + (process.pid % 100_000));

describe("orch server frozen past its renew deadline: the controller manager and the scheduler lead again", { skip: skip ?? false, timeout: 180_000 }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("server", ["--node-name=leases"], { readyTimeoutMs: 120_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    process.kill(orch.pid, "SIGCONT");
    await orch.stop();
    rmSync(files, { recursive: true, force: true });
  });

  test("SIGSTOP for 16 s, SIGCONT: both leases renewed again, a ReplicaSet's pod created and scheduled", async () => {
    const renewTime = async (name: string) => Date.parse(JSON.parse(await k.ok("get", "lease", "-n", "orch-system", name, "-o", "json")).spec.renewTime as string);
    process.kill(orch.pid, "SIGSTOP");
    await sleep(16_000);
    const resumed = Date.now();
    process.kill(orch.pid, "SIGCONT");
    await eventually("the leadership lost and logged", () => /scheduler failed: leader election lost/.test(orch.output()) && /controller-manager failed: leader election lost/.test(orch.output()), 30_000);
    for (const lease of ["orch-scheduler", "orch-controller-manager"]) {
      await eventually(`${lease} renewed after the freeze`, async () => (await renewTime(lease)) > resumed, 40_000);
    }
    const rs = join(files, "rs.yaml");
    writeFileSync(rs, `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: after-freeze}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: after-freeze}}\n  template:\n    metadata: {labels: {app: after-freeze}}\n    spec:\n      terminationGracePeriodSeconds: 1\n      containers: [{name: main, image: busybox:1.36, command: [sleep, "${TOKEN}"]}]\n`);
    await k.ok("create", "-f", rs);
    const node = await eventually("the ReplicaSet's pod on a node", async () => {
      const pods = JSON.parse(await k.ok("get", "pods", "-l", "app=after-freeze", "-o", "json")).items as { spec: { nodeName?: string } }[];
      return pods[0]?.spec.nodeName;
    }, 30_000);
    assert.equal(node, "leases");
  });
});
