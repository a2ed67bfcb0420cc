// End to end: a StatefulSet with volumeClaimTemplates on a one-node `orch
// server` (embedded runtime, local-path provisioner of the default class),
// driven by kubectl 1.33. Each pod gets its claim <template>-<set>-<ordinal>,
// bound to a local volume; a file written by web-0 is there for the web-0
// that replaces it. persistentVolumeClaimRetentionPolicy: whenScaled=Delete
// removes the scaled-away pod's claim, whenDeleted=Delete removes the rest
// with the set; Retain keeps them.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const rootReason = process.getuid?.() === 0 ? undefined : "needs root (the embedded runtime mounts volumes in mount namespaces)";

function statefulSet(name: string, replicas: number, policy: string): string {
  return `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  serviceName: ${name}
  selector: {matchLabels: {app: ${name}}}
  persistentVolumeClaimRetentionPolicy: ${policy}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: [sh, -c, 'if [ ! -f /data/first ]; then hostname > /data/first; date +%s%N >> /data/first; fi; exec sleep 100000']
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 16Mi}}
`;
}

describe("StatefulSet volumeClaimTemplates on orch server", { skip: kubectlSkipReason() ?? rootReason ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const apply = async (yaml: string) => {
    const r = await k.run(["apply", "-f", "-"], { input: yaml });
    assert.equal(r.code, 0, r.stderr);
  };
  const claims = async (app: string) => (await k.ok("get", "pvc", "-l", `app=${app}`, "-o", "jsonpath={.items[*].metadata.name}")).trim().split(" ").filter((s) => s !== "").sort();

  before(async () => {
    orch = await startOrch("server", ["--node-name=sts-claims"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await k?.run(["delete", "statefulset", "--all", "--wait=true"]);
    await orch?.stop();
  });

  test("each pod gets its bound claim; the replacement of web-0 reads what web-0 wrote", async () => {
    await apply(statefulSet("web", 2, "{whenDeleted: Delete, whenScaled: Delete}"));
    await k.ok("rollout", "status", "statefulset/web", "--timeout=90s");
    assert.deepEqual(await claims("web"), ["data-web-0", "data-web-1"]);
    for (const c of ["data-web-0", "data-web-1"]) {
      assert.equal((await k.ok("get", "pvc", c, "-o", "jsonpath={.status.phase}")).trim(), "Bound", c);
    }
    const before = (await k.ok("exec", "web-0", "--", "cat", "/data/first")).trim();
    assert.match(before, /^web-0\n\d+$/);
    const uid = (await k.ok("get", "pod", "web-0", "-o", "jsonpath={.metadata.uid}")).trim();
    await k.ok("delete", "pod", "web-0", "--wait=true");
    await eventually("a new web-0", async () => {
      const now = await k.run(["get", "pod", "web-0", "-o", "jsonpath={.metadata.uid}"]);
      return now.code === 0 && now.stdout.trim() !== uid && now.stdout.trim() !== "";
    }, 60_000);
    await k.ok("wait", "--for=condition=Ready", "pod/web-0", "--timeout=60s");
    assert.equal((await k.ok("exec", "web-0", "--", "cat", "/data/first")).trim(), before, "the same volume: the first run's file, unchanged");
  });

  test("whenScaled=Delete: scaling down removes the scaled-away pod's claim; whenDeleted=Delete: deleting the set removes the rest", async () => {
    await k.ok("scale", "statefulset/web", "--replicas=1");
    await eventually("data-web-1 gone", async () => (await claims("web")).join() === "data-web-0", 60_000);
    await k.ok("delete", "statefulset", "web", "--wait=true");
    await eventually("data-web-0 gone", async () => (await claims("web")).length === 0, 60_000);
  });

  test("Retain (the default): the claims outlive scaling down and the set", async () => {
    await apply(statefulSet("keep", 2, "{whenDeleted: Retain, whenScaled: Retain}"));
    await k.ok("rollout", "status", "statefulset/keep", "--timeout=90s");
    await k.ok("scale", "statefulset/keep", "--replicas=1");
    await eventually("keep-1 gone", async () => (await k.run(["get", "pod", "keep-1"])).code !== 0, 60_000);
    await k.ok("delete", "statefulset", "keep", "--wait=true");
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(await claims("keep"), ["data-keep-0", "data-keep-1"]);
  });
});
