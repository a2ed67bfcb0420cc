// Upstream's own kube-scheduler and kube-controller-manager (v1.23.16, built
// from source by ../shared/tools/upstream/build.sh) against `orch apiserver
// --api-group-suffix=k8s.io` (issue 15): they find every kind they list (no
// "could not find the requested resource" in their logs), the scheduler binds
// a Deployment's pods to a node, and the controller manager's deployment,
// replication-controller, quota and PV-binder loops act on orch's objects.
// CI cannot fetch upstream's source, so without the binaries this skips with
// the reason (UPSTREAM_BIN names their folder; default /tmp/upstream-k8s/bin).

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const BIN = process.env["UPSTREAM_BIN"] ?? "/tmp/upstream-k8s/bin";
const COMPONENTS = ["kube-scheduler", "kube-controller-manager"] as const;
const missing = COMPONENTS.filter((c) => !existsSync(join(BIN, c)));
const skip = kubectlSkipReason() ?? (missing.length > 0 ? `upstream ${missing.join(", ")} not in ${BIN} (build them with ../shared/tools/upstream/build.sh)` : undefined);

interface Upstream {
  child: ChildProcess;
  log: () => string;
}

function startUpstream(name: (typeof COMPONENTS)[number], kubeconfig: string, extra: string[]): Upstream {
  const auth = [`--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`];
  const child = spawn(join(BIN, name), [...auth, "--secure-port=0", "--leader-elect=false", ...extra], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (c: Buffer) => (log += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (log += c.toString()));
  return { child, log: () => log };
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const NODE = {
  apiVersion: "v1", kind: "Node",
  metadata: { name: "worker-1", labels: { "kubernetes.io/hostname": "worker-1", "kubernetes.io/os": "linux" } },
};
const NODE_STATUS = {
  status: {
    capacity: { cpu: "4", memory: "8Gi", pods: "110" },
    allocatable: { cpu: "4", memory: "8Gi", pods: "110" },
    conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "ready", lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"), lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z") }],
  },
};

const OBJECTS = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: default}
spec:
  replicas: 2
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: counts, namespace: default}
spec: {hard: {pods: "20", configmaps: "10"}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-manual}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /tmp/orch-upstream-pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  resources: {requests: {storage: 1Gi}}
`;

describe("upstream kube-scheduler and kube-controller-manager on orch apiserver", { skip }, () => {
  let server: OrchProcess;
  let kubectl: Kubectl;
  const upstream: Upstream[] = [];

  before(async () => {
    server = await startOrch("apiserver", ["--api-group-suffix=k8s.io"]);
    kubectl = new Kubectl(server.kubeconfig);
    const created = await kubectl.run(["create", "-f", "-"], { input: JSON.stringify(NODE) });
    assert.equal(created.code, 0, created.stderr);
    const status = await kubectl.run(["patch", "node", "worker-1", "--subresource=status", "--type=merge", "-p", JSON.stringify(NODE_STATUS)]);
    assert.equal(status.code, 0, status.stderr);
    upstream.push(startUpstream("kube-scheduler", server.kubeconfig, []));
    upstream.push(startUpstream("kube-controller-manager", server.kubeconfig, [
      "--controllers=*", "--use-service-account-credentials=false",
      `--cluster-signing-cert-file=${join(server.dataDir, "ca.crt")}`, `--cluster-signing-key-file=${join(server.dataDir, "ca.key")}`,
      `--root-ca-file=${join(server.dataDir, "ca.crt")}`,
    ]));
    const applied = await kubectl.run(["create", "-f", "-"], { input: OBJECTS });
    assert.equal(applied.code, 0, applied.stderr);
  });

  after(async () => {
    // SIGKILL: upstream's scheduler outlived a SIGTERM here (left running after the suite).
    for (const u of upstream) u.child.kill("SIGKILL");
    await server?.stop();
  });

  const json = async (...args: string[]) => JSON.parse(await kubectl.ok(...args, "-o", "json"));

  test("the scheduler binds the Deployment's pods (made by upstream's deployment and replica set loops) to the node", async () => {
    const pods = await eventually("2 web pods bound to worker-1", async () => {
      const list = await json("get", "pods", "-l", "app=web");
      const bound = list.items.filter((p: { spec: { nodeName?: string } }) => p.spec.nodeName === "worker-1");
      return bound.length === 2 ? bound : undefined;
    });
    assert.equal(pods.length, 2);
  });

  test("the replication-controller loop makes the RC's pods and the scheduler binds them", async () => {
    await eventually("2 legacy pods bound", async () => {
      const list = await json("get", "pods", "-l", "app=legacy");
      return list.items.filter((p: { spec: { nodeName?: string } }) => p.spec.nodeName === "worker-1").length === 2 ? true : undefined;
    });
    const rc = await json("get", "rc", "legacy");
    assert.equal(rc.status.replicas, 2);
  });

  test("the quota loop keeps status.used current", async () => {
    const used = await eventually("quota status.used.pods ≥ 4", async () => {
      const q = await json("get", "quota", "counts");
      return Number(q.status?.used?.pods ?? 0) >= 4 ? q.status.used : undefined;
    });
    assert.equal(used.configmaps !== undefined, true, JSON.stringify(used));
  });

  test("the PV binder binds the claim to the matching volume", async () => {
    const claim = await eventually("claim Bound", async () => {
      const c = await json("get", "pvc", "claim");
      return c.status?.phase === "Bound" ? c : undefined;
    });
    assert.equal(claim.spec.volumeName, "pv-manual");
    assert.equal((await json("get", "pv", "pv-manual")).status.phase, "Bound");
  });

  test("neither component met a kind orch does not serve", () => {
    for (const u of upstream) assert.doesNotMatch(u.log(), /could not find the requested resource/, u.log().slice(-3000));
  });
});
