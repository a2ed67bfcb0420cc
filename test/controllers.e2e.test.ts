// End to end: the built-in controllers inside the real `orch server`, driven
// by the real kubectl 1.33. No node agent runs for the objects used here: the
// test plays it (pod phases and IPs through pods/status, a node's Ready
// condition and lease), and keeps its pods off any real node with a
// nodeSelector nothing matches. The grace period is shortened by flag.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-controllers-"));
function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const JOB = `apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {example.com/played-by-test: "true"}
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`;

const now = () => new Date().toISOString().slice(0, 19) + "Z";
const micro = () => new Date().toISOString().slice(0, 23) + "000Z";

describe("kubectl 1.33 against orch server: the built-in controllers", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    // The test plays the node agent: the controllers under test, without a real node (test/cluster.e2e.test.ts has the real one).
    orch = await startOrch("server", ["--node-monitor-grace-period=2s", "--disable-agent", "--disable-scheduler"]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
  });

  /** Plays the node agent: the pod ran to `phase`. */
  const finishPod = (name: string, phase: string) =>
    k.ok("patch", "pod", name, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { phase } }));
  const jsonOf = async (...args: string[]) => JSON.parse(await k.ok("get", ...args, "-o", "json"));

  test("a Job runs to completion", async () => {
    await k.ok("create", "-f", file("job.yaml", JOB));
    const pods = await eventually("two pods", async () => {
      const list = await jsonOf("pods", "-l", "batch.orch.io/job-name=pi");
      return list.items.length === 2 ? (list.items as { metadata: { name: string; finalizers?: string[] } }[]) : undefined;
    });
    for (const pod of pods) assert.deepEqual(pod.metadata.finalizers, ["batch.orch.io/job-tracking"]);
    for (const pod of pods) await finishPod(pod.metadata.name, "Succeeded");
    await k.ok("wait", "--for=condition=Complete", "job/pi", "--timeout=20s");
    assert.match(await k.ok("get", "job", "pi"), /^pi\s+Complete\s+2\/2\s+/m);
  });

  test("a CronJob fires (an @every 2s schedule, which upstream accepts too, instead of waiting a minute)", async () => {
    // `kubectl create cronjob` sends protobuf, which this branch does not decode yet: YAML instead.
    await k.ok("create", "-f", file("tick.yaml", `apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: tick}\nspec:\n  schedule: "@every 2s"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          nodeSelector: {example.com/played-by-test: "true"}\n          containers: [{name: main, image: busybox:1.36}]\n`));
    const job = await eventually("a job made by the cronjob", async () => {
      const list = await jsonOf("jobs");
      return (list.items as { metadata: { name: string; ownerReferences?: { kind: string; name: string }[] } }[]).find((j) => j.metadata.ownerReferences?.[0]?.name === "tick");
    }, 15_000);
    assert.match(job.metadata.name, /^tick-\d+$/);
    const cj = await jsonOf("cronjob", "tick");
    assert.ok(cj.status.lastScheduleTime, "lastScheduleTime is set");
    await k.ok("patch", "cronjob", "tick", "--type=merge", "-p", '{"spec":{"suspend":true}}');
  });

  test("a node without heartbeats goes Ready Unknown after the grace period, is tainted, and its pods are evicted", async () => {
    await k.ok("create", "-f", file("node.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: e2e-node}\n"));
    const ready = { type: "Ready", status: "True", reason: "NodeagentReady", message: "played by the test", lastHeartbeatTime: now(), lastTransitionTime: now() };
    await k.ok("patch", "node", "e2e-node", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions: [ready] } }));
    await k.ok("create", "-f", file("lease.yaml", `apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata: {name: e2e-node, namespace: orch-node-lease}\nspec: {holderIdentity: e2e-node, leaseDurationSeconds: 40, renewTime: "${micro()}"}\n`));
    await k.ok(
      "create",
      "-f",
      file(
        "victim.yaml",
        `apiVersion: v1\nkind: Pod\nmetadata: {name: victim}\nspec:\n  nodeName: e2e-node\n  tolerations: [{key: node.orch.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 1}]\n  containers: [{name: main, image: busybox:1.36}]\n`,
      ),
    );
    // The agent falls silent now.
    await k.ok("wait", "--for=condition=Ready=Unknown", "node/e2e-node", "--timeout=20s");
    const node = await jsonOf("node", "e2e-node");
    const condition = node.status.conditions.find((c: { type: string }) => c.type === "Ready");
    assert.equal(condition.message, "Orch node agent stopped posting node status.");
    const taints = await eventually("both unreachable taints", async () => {
      const n = await jsonOf("node", "e2e-node");
      const t = ((n.spec.taints ?? []) as { key: string; effect: string }[]).map((x) => `${x.key}:${x.effect}`).sort();
      return t.length === 2 ? t : undefined;
    });
    assert.deepEqual(taints, ["node.orch.io/unreachable:NoExecute", "node.orch.io/unreachable:NoSchedule"]);
    // Evicted one tolerationSeconds later: deleted (it stays Terminating, as no agent confirms it stopped).
    await eventually("the pod evicted", async () => !!(await jsonOf("pod", "victim")).metadata.deletionTimestamp, 10_000);
    const pod = await jsonOf("pod", "victim");
    assert.equal(pod.status.conditions.find((c: { type: string }) => c.type === "DisruptionTarget")?.reason, "DeletionByTaintManager");
  });

  test("a Service gets Endpoints and an EndpointSlice; a namespace gets its default ServiceAccount", async () => {
    await k.ok("create", "-f", file("web.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, labels: {app: web}}\nspec:\n  nodeSelector: {example.com/played-by-test: \"true\"}\n  containers: [{name: main, image: nginx:1.27, ports: [{containerPort: 8080}]}]\n"));
    await k.ok("patch", "pod", "web-1", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { phase: "Running", podIP: "10.9.0.1", podIPs: [{ ip: "10.9.0.1" }], conditions: [{ type: "Ready", status: "True" }] } }));
    await k.ok("create", "-f", file("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n"));
    // The Endpoints object may not exist yet: NotFound is "not yet", not a failure.
    await eventually("endpoints", async () => /^web\s+10\.9\.0\.1:8080\s+/m.test((await k.run(["get", "endpoints", "web"])).stdout));
    const slices = await eventually("an endpointslice", async () => {
      const out = await k.ok("get", "endpointslices", "-l", "orch.io/service-name=web");
      return /10\.9\.0\.1/.test(out) ? out : undefined;
    });
    assert.match(slices, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/m);
    assert.match(slices, /^web-\S+\s+IPv4\s+8080\s+10\.9\.0\.1\s+/m);
    await k.ok("create", "-f", file("team.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n"));
    await eventually("default ServiceAccount in team", async () => (await k.run(["get", "serviceaccount", "default", "-n", "team"])).code === 0);
  });
});
