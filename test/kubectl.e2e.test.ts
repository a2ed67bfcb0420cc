// End to end: the real `orch apiserver` (lmdb, then etcd) driven by the real,
// unmodified kubectl 1.33, command by command as KUBECTL.md lists them.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcdSkipReason, startEtcd, type EtcdServer } from "../src/storage/etcd/testing/etcd-server.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-files-"));
function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const POD = (name: string, labels = "app: web") => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {${labels}}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: ["sleep", "3600"]
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
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

function suite(backend: "lmdb" | "etcd", skip: string | undefined): void {
  describe(`kubectl 1.33 against orch apiserver (${backend})`, { skip: skip ?? kubectlSkipReason() ?? false }, () => {
    let orch: OrchProcess;
    let etcd: EtcdServer | undefined;
    let k: Kubectl;
    before(async () => {
      const args: string[] = [];
      if (backend === "etcd") {
        etcd = await startEtcd();
        args.push("--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`);
      }
      orch = await startOrch("apiserver", args);
      k = new Kubectl(orch.kubeconfig);
    });
    after(async () => {
      await orch?.stop();
      await etcd?.stop();
    });

    test("api-resources and api-versions", async () => {
      const resources = await k.ok("api-resources");
      for (const line of [/^pods\s+po\s+v1\s+true\s+Pod$/m, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m, /^leases\s+coordination\.orch\.io\/v1\s+true\s+Lease$/m, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m]) {
        assert.match(resources, line);
      }
      const versions = await k.ok("api-versions");
      for (const v of ["v1", "apps/v1", "batch/v1", "coordination.orch.io/v1", "coordination.orch.io/v1beta1"]) assert.ok(versions.split("\n").includes(v), v);
    });

    test("create -f, get (table, -o yaml, -o json, -A, -l), label, annotate", async () => {
      assert.match(await k.ok("create", "-f", file(`p1-${backend}.yaml`, POD("p1"))), /pod\/p1 created/);
      const dup = await k.run(["create", "-f", file(`p1b-${backend}.yaml`, POD("p1"))]);
      assert.notEqual(dup.code, 0);
      assert.match(dup.stderr, /Error from server \(AlreadyExists\): .*pods "p1" already exists/);
      await k.ok("create", "-f", file(`p2-${backend}.yaml`, POD("p2", "app: db")));
      const table = await k.ok("get", "pods");
      assert.match(table, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/m);
      assert.match(table, /^p1\s+0\/1\s+Pending\s+0\s+\S+/m);
      const yaml = await k.ok("get", "pod", "p1", "-o", "yaml");
      assert.match(yaml, /^kind: Pod$/m);
      assert.match(yaml, /restartPolicy: Always/, "defaults applied");
      const json = JSON.parse(await k.ok("get", "pod", "p1", "-o", "json"));
      assert.equal(json.metadata.namespace, "default");
      const all = await k.ok("get", "pods", "-A");
      assert.match(all, /^NAMESPACE\s+NAME/m);
      assert.match(all, /^default\s+p2\s/m);
      const selected = await k.ok("get", "pods", "-l", "app=db", "-o", "name");
      assert.equal(selected.trim(), "pod/p2");
      assert.match(await k.ok("label", "pod", "p1", "tier=front"), /pod\/p1 labeled/);
      assert.match(await k.ok("annotate", "pod", "p1", "note=hello"), /pod\/p1 annotated/);
      const labelled = JSON.parse(await k.ok("get", "pod", "p1", "-o", "json"));
      assert.equal(labelled.metadata.labels.tier, "front");
      assert.equal(labelled.metadata.annotations.note, "hello");
      const clash = await k.run(["label", "pod", "p1", "tier=back"]);
      assert.notEqual(clash.code, 0, "label without --overwrite refuses to change a value");
    });

    test("get -w sees changes as they happen", async () => {
      await k.ok("create", "-f", file(`w1-${backend}.yaml`, POD("w1")));
      const watch = k.spawn(["get", "pod", "w1", "-w", "--output-watch-events", "--request-timeout=20s"]);
      await waitFor(() => /ADDED\s+w1/.test(watch.output()), 10_000, () => watch.output());
      await k.ok("label", "pod", "w1", "seen=yes");
      await waitFor(() => /MODIFIED\s+w1/.test(watch.output()), 10_000, () => watch.output());
      watch.child.kill();
    });

    test("delete waits; wait --for=condition and --for=delete", async () => {
      await k.ok("create", "-f", file(`d1-${backend}.yaml`, POD("d1")));
      const cond = k.spawn(["wait", "--for=condition=Ready", "pod/d1", "--timeout=20s"]);
      await new Promise((r) => setTimeout(r, 300));
      await k.ok("patch", "pod", "d1", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions: [{ type: "Ready", status: "True" }] } }));
      assert.equal(await cond.exited, 0, cond.output());
      assert.match(cond.output(), /pod\/d1 condition met/);

      const gone = k.spawn(["wait", "--for=delete", "pod/d1", "--timeout=20s"]);
      await new Promise((r) => setTimeout(r, 300));
      assert.match(await k.ok("delete", "pod", "d1", "--grace-period=0"), /pod "d1" deleted/);
      assert.equal(await gone.exited, 0, gone.output());
      const missing = await k.run(["get", "pod", "d1"]);
      assert.match(missing.stderr, /Error from server \(NotFound\): pods "d1" not found/);
    });

    test("apply -f twice (strategic merge), patch --type json|merge|strategic, scale", async () => {
      const path = file(`apply-${backend}.yaml`, DEPLOYMENT.replace("name: web", "name: applied"));
      assert.match(await k.ok("apply", "-f", path), /deployment.apps\/applied created/);
      writeFileSync(path, DEPLOYMENT.replace("name: web", "name: applied").replace("replicas: 2", "replicas: 3").replace("image: nginx:1.27", "image: nginx:1.28"));
      assert.match(await k.ok("apply", "-f", path), /deployment.apps\/applied configured/);
      const applied = JSON.parse(await k.ok("get", "deploy", "applied", "-o", "json"));
      assert.equal(applied.spec.replicas, 3);
      assert.equal(applied.spec.template.spec.containers[0].image, "nginx:1.28");
      assert.equal(applied.spec.template.spec.containers.length, 1, "containers merged by name, not appended");
      assert.match(await k.ok("apply", "-f", path), /deployment.apps\/applied unchanged/);

      await k.ok("patch", "deploy", "applied", "-p", JSON.stringify({ spec: { template: { spec: { containers: [{ name: "sidecar", image: "busybox:1.36" }] } } } }));
      const strategic = JSON.parse(await k.ok("get", "deploy", "applied", "-o", "json"));
      assert.deepEqual(strategic.spec.template.spec.containers.map((c: { name: string }) => c.name).sort(), ["main", "sidecar"], "strategic merge adds a container by name");
      await k.ok("patch", "deploy", "applied", "--type=json", "-p", JSON.stringify([{ op: "replace", path: "/spec/replicas", value: 5 }]));
      await k.ok("patch", "deploy", "applied", "--type=merge", "-p", JSON.stringify({ metadata: { labels: { patched: "yes" } } }));
      const patched = JSON.parse(await k.ok("get", "deploy", "applied", "-o", "json"));
      assert.equal(patched.spec.replicas, 5);
      assert.equal(patched.metadata.labels.patched, "yes");
      const failed = await k.run(["patch", "deploy", "applied", "--type=json", "-p", JSON.stringify([{ op: "test", path: "/spec/replicas", value: 99 }])]);
      assert.notEqual(failed.code, 0, "a failed JSON patch test changes nothing");
      assert.match(await k.ok("scale", "deploy", "applied", "--replicas=2"), /deployment.apps\/applied scaled/);
      assert.equal(JSON.parse(await k.ok("get", "deploy", "applied", "-o", "json")).spec.replicas, 2);
      assert.match(await k.ok("scale", "deploy", "applied", "--current-replicas=2", "--replicas=4"), /scaled/);
      assert.equal(JSON.parse(await k.ok("get", "deploy", "applied", "-o", "json")).spec.replicas, 4);
    });

    test("deployments, explain, describe, cluster-info", async () => {
      assert.match(await k.ok("create", "-f", file(`deploy-${backend}.yaml`, DEPLOYMENT)), /deployment.apps\/web created/);
      assert.match(await k.ok("get", "deploy"), /^web\s+0\/2\s+0\s+0\s+\S+/m);
      const explain = await k.ok("explain", "pods.spec.containers");
      assert.match(explain, /KIND:\s+Pod/);
      assert.match(explain, /FIELD:\s+containers/);
      assert.match(explain, /image\s+<string>/);
      const describe = await k.ok("describe", "pod", "p1");
      assert.match(describe, /^Name:\s+p1$/m);
      assert.match(describe, /^Namespace:\s+default$/m);
      const info = await k.ok("cluster-info");
      assert.match(info, new RegExp(`is running at ${orch.url.replace(/[.]/g, "\\.")}`));
    });
  });
}

suite("lmdb", undefined);
suite("etcd", etcdSkipReason());

async function waitFor(check: () => boolean, ms: number, describeState: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${ms} ms; state:\n${describeState()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("kubectl 1.33 against orch server (API server + controllers)", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    // The controllers under test, without a node: nothing here needs pods to run.
    orch = await startOrch("server", ["--disable-agent", "--disable-scheduler"]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => orch?.stop());

  test("deleting a namespace removes what it holds, then the namespace (kubectl waits)", async () => {
    await k.ok("create", "-f", file("ns-doomed.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: doomed\n"));
    await k.ok("create", "-n", "doomed", "-f", file("ns-doomed-pod.yaml", POD("inside")));
    await k.ok("create", "-n", "doomed", "-f", file("ns-doomed-deploy.yaml", DEPLOYMENT));
    const deleted = await k.run(["delete", "namespace", "doomed", "--timeout=30s"], { timeoutMs: 40_000 });
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /namespace "doomed" deleted/);
    const gone = await k.run(["get", "namespace", "doomed"]);
    assert.match(gone.stderr, /namespaces "doomed" not found/);
    const pods = await k.ok("get", "pods", "-A", "-o", "name");
    assert.ok(!pods.includes("inside"), "the namespace's pods are gone");
  });
});
