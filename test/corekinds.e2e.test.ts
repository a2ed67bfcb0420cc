// End to end: ReplicationControllers, PodTemplates, LimitRanges,
// ResourceQuotas and pods/eviction inside the real `orch server`, driven by
// the real kubectl 1.33. No node agent or scheduler runs: the test plays the
// node agent (pods' Ready condition through pods/status) and keeps its pods
// off real nodes (a nodeSelector nothing matches, or a Node object nothing runs).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-corekinds-"));
function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const RC = `apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {example.com/played-by-test: "true"}
      containers: [{name: main, image: nginx:1.27}]
`;

describe("kubectl 1.33 against orch server: core kinds, quota, limits, eviction", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("server", ["--disable-agent", "--disable-scheduler"]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
  });
  const jsonOf = async (...args: string[]) => JSON.parse(await k.ok("get", ...args, "-o", "json"));
  const ready = (pod: string) => {
    const at = new Date().toISOString().slice(0, 19) + "Z";
    return k.ok("patch", "pod", pod, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { phase: "Running", conditions: [{ type: "Ready", status: "True", lastTransitionTime: at }] } }));
  };

  test("a ReplicationController keeps its pods; kubectl get rc and scale rc", async () => {
    await k.ok("create", "-f", file("rc.yaml", RC));
    await eventually("3 pods", async () => (await jsonOf("pods", "-l", "app=web")).items.length === 3, 15_000);
    await eventually("status", async () => /^web\s+3\s+3\s+0\s+\S+$/m.test(await k.ok("get", "rc", "web")));
    assert.match(await k.ok("get", "rc", "web"), /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE$/m);
    assert.match(await k.ok("get", "rc", "web", "-o", "wide"), /CONTAINERS\s+IMAGES\s+SELECTOR[\s\S]*main\s+nginx:1.27\s+app=web/);
    await k.ok("scale", "rc", "web", "--replicas=1");
    await eventually("1 pod", async () => (await jsonOf("pods", "-l", "app=web")).items.filter((p: { metadata: { deletionTimestamp?: string } }) => !p.metadata.deletionTimestamp).length === 1, 15_000);
    assert.match(await k.ok("get", "all"), /replicationcontroller\/web/);
    assert.match(await k.ok("explain", "rc.spec.selector"), /FIELD: selector <map\[string\]string>/);
    await k.ok("delete", "rc", "web");
  });

  test("pod templates: kubectl get columns as upstream's", async () => {
    await k.ok("create", "-f", file("pt.yaml", "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: tpl}\ntemplate:\n  metadata: {labels: {a: b}}\n  spec:\n    containers: [{name: c, image: busybox}]\n"));
    const out = await k.ok("get", "podtemplates");
    assert.match(out, /^NAME\s+CONTAINERS\s+IMAGES\s+POD LABELS$/m);
    assert.match(out, /^tpl\s+c\s+busybox\s+a=b$/m);
  });

  test("limit ranges default and bound pods; quotas refuse what is over them", async () => {
    await k.ok("create", "namespace", "limited");
    await k.ok("create", "-n", "limited", "-f", file("lr.yaml", "apiVersion: v1\nkind: LimitRange\nmetadata: {name: cpu}\nspec:\n  limits:\n  - type: Container\n    max: {cpu: '1'}\n    defaultRequest: {cpu: 100m}\n"));
    assert.match(await k.ok("get", "limits", "-n", "limited"), /^NAME\s+CREATED AT\ncpu\s+\d{4}-/m);
    await k.ok("create", "quota", "pods", "-n", "limited", "--hard=pods=1,requests.cpu=1");
    await eventually("quota counted", async () => /pods: 0\/1/.test(await k.ok("get", "quota", "-n", "limited")));
    assert.match(await k.ok("get", "quota", "-n", "limited"), /^NAME\s+AGE\s+REQUEST\s+LIMIT$/m);
    await k.ok("run", "one", "-n", "limited", "--image=busybox", "--overrides", JSON.stringify({ spec: { nodeSelector: { "example.com/played-by-test": "true" } } }));
    const one = await jsonOf("pod", "one", "-n", "limited");
    assert.deepEqual(one.spec.containers[0].resources, { requests: { cpu: "100m" }, limits: { cpu: "1" } });
    assert.match(await k.ok("get", "quota", "pods", "-n", "limited"), /pods: 1\/1, requests.cpu: 100m\/1/);
    assert.match(await k.ok("describe", "quota", "pods", "-n", "limited"), /pods\s+1\s+1\n/);
    const two = await k.run(["run", "two", "-n", "limited", "--image=busybox"]);
    assert.notEqual(two.code, 0);
    assert.match(two.stderr, /pods "two" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1/);
    await k.ok("delete", "quota", "pods", "-n", "limited");
    const big = await k.run(["run", "big", "-n", "limited", "--image=busybox", "--overrides", JSON.stringify({ spec: { containers: [{ name: "big", image: "busybox", resources: { limits: { cpu: "2" } } }] } })]);
    assert.notEqual(big.code, 0);
    assert.match(big.stderr, /pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/);
  });

  test("kubectl get cs: the control plane's health", async () => {
    const out = await eventually("etcd-0", async () => {
      const r = await k.run(["get", "cs"]);
      return /^etcd-0\s+Healthy\s+\{"health":"true","reason":""\}/m.test(r.stdout) ? r : undefined;
    });
    assert.match(out.stdout, /^NAME\s+STATUS\s+MESSAGE\s+ERROR$/m);
  });

  test("kubectl drain evicts, and waits on a PodDisruptionBudget", async () => {
    await k.ok("create", "-f", file("node.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {example.com/played-by-test: 'true'}}\n"));
    // A Ready node (else the node lifecycle controller marks its pods not ready).
    const at = new Date().toISOString().slice(0, 19) + "Z";
    await k.ok("patch", "node", "n1", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", lastHeartbeatTime: at, lastTransitionTime: at }] } }));
    for (const name of ["db-0", "db-1"]) {
      await k.ok("create", "-f", file(`${name}.yaml`, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: {app: db}}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: busybox}]\n`));
      await ready(name);
    }
    await k.ok("create", "pdb", "db", "--selector=app=db", "--min-available=1");
    await eventually("pdb allows 1", async () => /^db\s+1\s+N\/A\s+1\s+/m.test(await k.ok("get", "pdb", "db"))).catch(async (e: unknown) => {
      throw new Error(`${String(e)}: ${await k.ok("get", "pdb", "db", "-o", "yaml")} ${await k.ok("get", "pods", "-o", "wide")} ${orch.output().split("\n").filter((l) => /disruption|error/i.test(l)).slice(-20).join("\n")}`);
    });
    // One pod may go; the second would break the budget: drain keeps retrying until its timeout.
    const blocked = await k.run(["drain", "n1", "--ignore-daemonsets", "--force", "--grace-period=0", "--timeout=8s"], { timeoutMs: 30_000 });
    assert.notEqual(blocked.code, 0);
    assert.match(blocked.stdout + blocked.stderr, /Cannot evict pod as it would violate the pod's disruption budget/);
    const left = (await jsonOf("pods", "-l", "app=db")).items as { metadata: { name: string } }[];
    assert.equal(left.length, 1);
    assert.match((await jsonOf("node", "n1")).spec.unschedulable ? "cordoned" : "", /cordoned/);
    await k.ok("delete", "pdb", "db");
    const done = await k.run(["drain", "n1", "--ignore-daemonsets", "--force", "--grace-period=0", "--timeout=20s"], { timeoutMs: 30_000 });
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /node\/n1 drained/);
    assert.equal((await jsonOf("pods", "-l", "app=db")).items.length, 0);
  });
});

describe("kubectl 1.27 against orch server --api-group-suffix=k8s.io: rc, limits, quota, eviction", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("server", ["--disable-agent", "--disable-scheduler", "--api-group-suffix=k8s.io"]);
    k = new Kubectl(orch.kubeconfig, "1.27");
  });
  after(async () => {
    await orch?.stop();
  });
  const jsonOf = async (...args: string[]) => JSON.parse(await k.ok("get", ...args, "-o", "json"));

  test("the same kinds and messages on upstream's names", async () => {
    // kubectl 1.27 validates against /openapi/v2, which another slice of issue 15 serves: not validated client-side here.
    await k.ok("create", "--validate=false", "-f", file("rc127.yaml", RC));
    await eventually("3 pods", async () => (await jsonOf("pods", "-l", "app=web")).items.length === 3, 15_000);
    await k.ok("scale", "rc", "web", "--replicas=0");
    await k.ok("create", "--validate=false", "-f", file("lr127.yaml", "apiVersion: v1\nkind: LimitRange\nmetadata: {name: cpu}\nspec:\n  limits:\n  - type: Container\n    max: {cpu: '1'}\n"));
    await k.ok("create", "quota", "pods", "--hard=pods=4");
    await eventually("quota counted", async () => /pods: [0-3]\/4/.test(await k.ok("get", "quota")));
    await k.ok("run", "one", "--image=busybox", "--overrides", JSON.stringify({ spec: { nodeSelector: { "example.com/played-by-test": "true" } } }));
    const one = await jsonOf("pod", "one");
    assert.equal(one.metadata.annotations["kubernetes.io/limit-ranger"], "LimitRanger plugin set: cpu request for container one; cpu limit for container one");
    const big = await k.run(["run", "big", "--image=busybox", "--overrides", JSON.stringify({ spec: { containers: [{ name: "big", image: "busybox", resources: { limits: { cpu: "2" } } }] } })]);
    assert.match(big.stderr, /pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/);
    await k.ok("create", "pdb", "one", "--selector=run=one", "--min-available=1");
    await eventually("pdb counted", async () => (await jsonOf("pdb", "one")).status?.expectedPods === 1);
  });
});
