// End to end: persistent volumes on a one-node `orch server` (embedded
// runtime) driven by kubectl 1.33. A claim of the default class (local-path,
// WaitForFirstConsumer) gets a volume under DATA_DIR/volumes once a pod using
// it is scheduled; the pod writes a file; after the pod is deleted, a new pod
// reading the claim sees the file. `kubectl get pv,pvc,sc` prints upstream's
// columns. A pod whose claim does not exist stays Pending with upstream's message.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const rootReason = process.getuid?.() === 0 ? undefined : "needs root (the embedded runtime mounts volumes in mount namespaces)";

const claim = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 64Mi}}
`;

function pod(name: string, script: string, claimName = "data"): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [sh, -c, ${JSON.stringify(script)}], volumeMounts: [{name: d, mountPath: /data}]}
  volumes:
  - {name: d, persistentVolumeClaim: {claimName: ${claimName}}}
`;
}

/** The header of each table `kubectl get` printed, as column lists. */
function headers(out: string): string[][] {
  return out.split("\n").filter((l) => l.startsWith("NAME ")).map((l) => l.trim().split(/\s{2,}/));
}

describe("persistent volumes on orch server", { skip: kubectlSkipReason() ?? rootReason ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const apply = async (yaml: string) => {
    const r = await k.run(["apply", "-f", "-"], { input: yaml });
    assert.equal(r.code, 0, r.stderr);
  };
  const json = async (...args: string[]) => JSON.parse(await k.ok("get", ...args, "-o", "json"));
  const finished = (name: string) => eventually(`pod ${name} finished`, async () => {
    const p = await json("pod", name);
    return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p.status.phase : undefined;
  }, 90_000);

  before(async () => {
    orch = await startOrch("server", ["--node-name=pv-main"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
  });

  test("the default class exists: kubectl get sc shows local-path (default)", async () => {
    const out = await eventually("default class", async () => {
      const r = await k.run(["get", "sc"]);
      return r.stdout.includes("local-path (default)") ? r.stdout : undefined;
    }, 20_000);
    assert.deepEqual(headers(out), [["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]]);
    assert.match(out, /local-path \(default\)\s+orch\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false/);
  });

  test("a claim of the default class gets a volume; a file written by one pod is read by the next", async () => {
    await apply(claim);
    const pending = await json("pvc", "data");
    assert.equal(pending.spec.storageClassName, "local-path");
    assert.equal(pending.status.phase, "Pending", "WaitForFirstConsumer: no volume before a pod uses it");

    await apply(pod("writer", "echo hello-from-writer > /data/greeting"));
    assert.equal(await finished("writer"), "Succeeded");
    const bound = await json("pvc", "data");
    assert.equal(bound.status.phase, "Bound");
    const pvName: string = bound.spec.volumeName;
    const pv = await json("pv", pvName);
    assert.equal(pv.spec.hostPath.path, join(orch.dataDir, "volumes", pvName));
    assert.equal(readFileSync(join(orch.dataDir, "volumes", pvName, "greeting"), "utf8"), "hello-from-writer\n");

    await k.ok("delete", "pod", "writer", "--wait=true");
    await apply(pod("reader", "cat /data/greeting"));
    assert.equal(await finished("reader"), "Succeeded");
    assert.equal(await k.ok("logs", "reader"), "hello-from-writer\n");

    // kubectl get pv,pvc,sc: upstream's columns for each.
    const out = await k.ok("get", "pv,pvc,sc");
    assert.deepEqual(headers(out), [
      ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"],
      ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"],
      ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"],
    ]);
    assert.match(out, new RegExp(`persistentvolume/${pvName}\\s+64Mi\\s+RWO\\s+Delete\\s+Bound\\s+default/data\\s+local-path\\s+<unset>`));
    assert.match(out, new RegExp(`persistentvolumeclaim/data\\s+Bound\\s+${pvName}\\s+64Mi\\s+RWO\\s+local-path\\s+<unset>`));

    // Deleting the claim (no pod uses it now) releases the volume; reclaim Delete removes it and its directory.
    await k.ok("delete", "pod", "reader", "--wait=true");
    await k.ok("delete", "pvc", "data", "--wait=true");
    await eventually("volume and directory removed", async () => (await k.run(["get", "pv", pvName])).code !== 0 && !existsSync(join(orch.dataDir, "volumes", pvName)), 30_000);
  });

  const unschedulable = (name: string) => eventually(`${name} unschedulable`, async () => {
    const p = await json("pod", name);
    const c = (p.status?.conditions ?? []).find((x: { type: string }) => x.type === "PodScheduled");
    return c?.status === "False" ? (c.message as string) : undefined;
  }, 30_000);

  test("a pod whose claim does not exist, or is unbound with no class, stays Pending with upstream's message", async () => {
    await apply(pod("orphan", "true", "nope"));
    assert.match(await unschedulable("orphan"), /^0\/1 nodes are available: persistentvolumeclaim "nope" not found\./);
    // storageClassName "" is no class: nothing provisions it, and no volume matches.
    await apply(claim.replace("name: data", "name: lonely").replace("accessModes", 'storageClassName: ""\n  accessModes'));
    await apply(pod("waiting", "true", "lonely"));
    assert.match(await unschedulable("waiting"), /^0\/1 nodes are available: pod has unbound immediate PersistentVolumeClaims\./);
  });
});
