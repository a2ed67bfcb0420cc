// End to end: kubectl 1.33 drives workloads on the real `orch server` (API
// server + controller manager): create, scale, rollout status / history /
// undo / restart, delete cascading through the garbage collector; a
// StatefulSet and a DaemonSet (on a Node object the test creates) rolled out.
// No node agent or scheduler runs in `orch server` yet: the test plays the
// node agent, marking pods Running and Ready through pods/status.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RestClient } from "../src/client/index.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { playNodeAgent, type PlayedAgent } from "./support/play-node-agent.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.27
`;

const STATEFULSET = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: main
        image: postgres:17
`;

const NODE = `apiVersion: v1
kind: Node
metadata:
  name: e2e-node
  labels: {role: edge}
`;

const DAEMONSET = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      nodeSelector: {role: edge}
      containers:
      - name: main
        image: busybox:1.36
`;

interface Owned {
  metadata: { name: string; ownerReferences?: { kind: string; name: string; controller?: boolean }[]; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
}

describe("kubectl 1.33 drives workloads on orch server", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  let client: RestClient;
  let agent: PlayedAgent;
  before(async () => {
    // The test plays the node agent (and binds nothing): the controllers under test, without a real node.
    orch = await startOrch("server", ["--disable-agent", "--disable-scheduler"]);
    k = new Kubectl(orch.kubeconfig);
    agent = playNodeAgent(orch.kubeconfig);
    client = agent.client;
  });
  after(async () => {
    await agent?.stop();
    await orch?.stop();
  });

  const json = async <T>(...args: string[]): Promise<T> => JSON.parse(await k.ok(...args, "-o", "json")) as T;
  const pods = async () => (await json<{ items: Owned[] }>("get", "pods", "-l", "app=web")).items;
  const sets = async () => (await json<{ items: Owned[] }>("get", "replicasets", "-l", "app=web")).items;
  const rolloutStatus = async () => {
    const r = await k.run(["rollout", "status", "deployment/web", "--timeout=30s"], { timeoutMs: 40_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /deployment "web" successfully rolled out/);
  };
  const until = async (what: string, check: () => Promise<boolean>, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-workloads-"));
  const file = (name: string, content: string) => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };

  test("create -f: a ReplicaSet and 3 pods, each owned by the one above; rollout status", async () => {
    assert.match(await k.ok("create", "-f", file("deployment.yaml", DEPLOYMENT)), /deployment.apps\/web created/);
    await until("3 pods", async () => (await pods()).length === 3);
    const [rs] = await sets();
    assert.deepEqual(rs!.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [["Deployment", "web", true]]);
    for (const p of await pods()) assert.deepEqual(p.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [["ReplicaSet", rs!.metadata.name, true]]);
    await rolloutStatus();
    assert.match(await k.ok("get", "deployment", "web"), /^web\s+3\/3\s+3\s+3\s/m);
  });

  test("scale", async () => {
    assert.match(await k.ok("scale", "deployment/web", "--replicas=5"), /deployment.apps\/web scaled/);
    await until("5 pods", async () => (await pods()).length === 5);
    await rolloutStatus();
  });

  test("set image, rollout history, rollout undo", async () => {
    await k.ok("set", "image", "deployment/web", "main=nginx:1.28");
    await rolloutStatus();
    const history = await k.ok("rollout", "history", "deployment/web");
    assert.match(history, /^1\s/m);
    assert.match(history, /^2\s/m);
    assert.match(await k.ok("rollout", "undo", "deployment/web"), /deployment.apps\/web rolled back/);
    await rolloutStatus();
    const d = await json<Owned>("get", "deployment", "web");
    assert.equal(d.spec?.template?.spec?.containers?.[0]?.image, "nginx:1.27");
    assert.equal(d.metadata.annotations?.["deployment.orch.io/revision"], "3");
    for (const p of await pods()) assert.equal((p as { spec?: { containers?: { image?: string }[] } }).spec?.containers?.[0]?.image, "nginx:1.27");
    assert.equal((await sets()).length, 2, "undo reuses the first ReplicaSet");
  });

  test("rollout restart makes new pods", async () => {
    const before = new Set((await pods()).map((p) => p.metadata.name));
    assert.match(await k.ok("rollout", "restart", "deployment/web"), /deployment.apps\/web restarted/);
    await rolloutStatus();
    const after = await pods();
    assert.equal(after.length, 5);
    assert.ok(after.every((p) => !before.has(p.metadata.name)), "every pod replaced");
    assert.equal((await sets()).length, 3);
  });

  test("delete deployment cascades to its ReplicaSets and pods", async () => {
    assert.match(await k.ok("delete", "deployment", "web"), /deployment.apps "web" deleted/);
    await until("ReplicaSets and pods gone", async () => (await sets()).length === 0 && (await pods()).length === 0, 20_000);
  });

  // kubectl's typed create sends a Protobuf body.
  test("create deployment --image --replicas", async () => {
    assert.match(await k.ok("create", "deployment", "hello", "--image=nginx:1.27", "--replicas=2"), /deployment.apps\/hello created/);
    const r = await k.run(["rollout", "status", "deployment/hello", "--timeout=30s"], { timeoutMs: 40_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal((await k.ok("get", "pods", "-l", "app=hello", "-o", "name")).trim().split("\n").length, 2);
  });

  test("a StatefulSet: db-0 then db-1; rollout status", async () => {
    assert.match(await k.ok("create", "-f", file("statefulset.yaml", STATEFULSET)), /statefulset.apps\/db created/);
    const r = await k.run(["rollout", "status", "statefulset/db", "--timeout=30s"], { timeoutMs: 40_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    // The API defaults rollingUpdate.partition to 0, so kubectl reports a partitioned rollout (as against upstream).
    assert.match(r.stdout, /partitioned roll out complete: 2 new pods have been updated\.\.\./);
    assert.deepEqual((await k.ok("get", "pods", "-l", "app=db", "-o", "name")).trim().split("\n"), ["pod/db-0", "pod/db-1"]);
  });

  test("a DaemonSet puts a pod on the matching node; rollout status", async () => {
    await k.ok("create", "-f", file("node.yaml", NODE));
    assert.match(await k.ok("create", "-f", file("daemonset.yaml", DAEMONSET)), /daemonset.apps\/agent created/);
    const r = await k.run(["rollout", "status", "daemonset/agent", "--timeout=30s"], { timeoutMs: 40_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /daemon set "agent" successfully rolled out/);
    const pods = (await json<{ items: { spec?: { affinity?: unknown } }[] }>("get", "pods", "-l", "app=agent")).items;
    assert.equal(pods.length, 1);
    assert.match(JSON.stringify(pods[0]!.spec?.affinity), /"values":\["e2e-node"\]/);
  });
});
