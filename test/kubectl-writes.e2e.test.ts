// End to end: the writes kubectl makes (KUBECTL.md "Writes") against the real
// `orch apiserver` (lmdb, then etcd), driven by the real, unmodified kubectl
// 1.33: client-side and server-side apply, conflicts and --force-conflicts,
// server dry runs, diff, the three patch types, scale, label --overwrite and
// kubectl's field validation (Strict by default, --validate=warn).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcdSkipReason } from "../src/storage/etcd/testing/etcd-server.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { deploymentYaml } from "./support/manifests.js";
import { startOrchOn, type Backend } from "./support/orch-backend.js";
import type { OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-writes-"));
function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const deployment = deploymentYaml;

interface Entry {
  manager: string;
  operation: string;
  subresource?: string;
  fieldsV1: Record<string, unknown>;
}

function suite(backend: Backend, skip: string | undefined): void {
  describe(`kubectl 1.33 writes against orch apiserver (${backend})`, { skip: skip ?? kubectlSkipReason() ?? false }, () => {
    let orch: OrchProcess;
    let k: Kubectl;
    // kubectl hides managedFields unless asked.
    const json = async (...args: string[]) => JSON.parse(await k.ok("get", ...args, "-o", "json", "--show-managed-fields"));
    before(async () => {
      orch = await startOrchOn(backend);
      k = new Kubectl(orch.kubeconfig);
    });
    after(async () => orch?.stop());

    test("apply -f (client-side) twice with changes, then unchanged", async () => {
      const path = file(`csa-${backend}.yaml`, deployment("csa", 1, "nginx:1.27"));
      assert.match(await k.ok("apply", "-f", path), /deployment.apps\/csa created/);
      writeFileSync(path, deployment("csa", 3, "nginx:1.28"));
      assert.match(await k.ok("apply", "-f", path), /deployment.apps\/csa configured/);
      const d = await json("deploy", "csa");
      assert.equal(d.spec.replicas, 3);
      assert.equal(d.spec.template.spec.containers[0].image, "nginx:1.28");
      assert.ok(d.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]);
      assert.ok(d.metadata.managedFields.some((e: Entry) => e.manager === "kubectl-client-side-apply" && e.operation === "Update"));
      assert.match(await k.ok("apply", "-f", path), /deployment.apps\/csa unchanged/);
    });

    test("apply --server-side twice, a conflicting manager (409), then --force-conflicts", async () => {
      const path = file(`ssa-${backend}.yaml`, deployment("ssa", 2, "nginx:1.27", "        ports:\n        - containerPort: 80\n"));
      assert.match(await k.ok("apply", "--server-side", "-f", path), /deployment.apps\/ssa serverside-applied/);
      writeFileSync(path, deployment("ssa", 3, "nginx:1.27"));
      assert.match(await k.ok("apply", "--server-side", "-f", path), /deployment.apps\/ssa serverside-applied/);
      const d = await json("deploy", "ssa");
      assert.equal(d.spec.replicas, 3);
      assert.equal(d.spec.template.spec.containers[0].ports, undefined, "the port kubectl stopped applying is gone");
      const mine = d.metadata.managedFields.find((e: Entry) => e.manager === "kubectl");
      assert.equal(mine.operation, "Apply");

      const other = file(`ssa-other-${backend}.yaml`, deployment("ssa", 3, "nginx:1.28"));
      const clash = await k.run(["apply", "--server-side", "--field-manager=other", "-f", other]);
      assert.notEqual(clash.code, 0);
      assert.match(clash.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.template\.spec\.containers\[name="main"\]\.image/);
      assert.match(clash.stderr, /--force-conflicts/, "kubectl explains how to resolve it");
      assert.equal((await json("deploy", "ssa")).spec.template.spec.containers[0].image, "nginx:1.27", "nothing changed");

      assert.match(await k.ok("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other), /serverside-applied/);
      const forced = await json("deploy", "ssa");
      assert.equal(forced.spec.template.spec.containers[0].image, "nginx:1.28");
      const managers = forced.metadata.managedFields.map((e: Entry) => e.manager).sort();
      assert.deepEqual(managers, ["kubectl", "other"]);
    });

    test("apply --dry-run=server and diff change nothing", async () => {
      const path = file(`dry-${backend}.yaml`, deployment("dry", 1, "nginx:1.27"));
      await k.ok("apply", "--server-side", "-f", path);
      const rv = (await json("deploy", "dry")).metadata.resourceVersion;
      writeFileSync(path, deployment("dry", 4, "nginx:1.27"));
      assert.match(await k.ok("apply", "--server-side", "--dry-run=server", "-f", path), /deployment.apps\/dry serverside-applied \(server dry run\)/);
      const client = await k.ok("apply", "--dry-run=server", "-f", file(`dry-csa-${backend}.yaml`, deployment("dry-csa", 2, "nginx:1.27")));
      assert.match(client, /deployment.apps\/dry-csa created \(server dry run\)/);
      const diff = await k.run(["diff", "--server-side", "-f", path]);
      assert.equal(diff.code, 1, `diff exits 1 when there are differences: ${diff.stderr}`);
      assert.match(diff.stdout, /^-\s+replicas: 1$/m);
      assert.match(diff.stdout, /^\+\s+replicas: 4$/m);
      const same = await k.run(["diff", "-f", file(`dry-same-${backend}.yaml`, deployment("dry", 1, "nginx:1.27"))]);
      assert.equal(same.code, 0, `no differences: ${same.stdout}${same.stderr}`);
      const d = await json("deploy", "dry");
      assert.equal(d.spec.replicas, 1);
      assert.equal(d.metadata.resourceVersion, rv, "nothing stored");
      assert.notEqual((await k.run(["get", "deploy", "dry-csa"])).code, 0, "the dry-run create stored nothing");
    });

    test("create --dry-run=server -o yaml shows the defaulted object and stores nothing", async () => {
      const path = file(`cdry-${backend}.yaml`, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: cdry\nspec:\n  containers:\n  - name: main\n    image: busybox:1.36\n");
      const yaml = await k.ok("create", "--dry-run=server", "-o", "yaml", "--show-managed-fields", "-f", path);
      assert.match(yaml, /^kind: Pod$/m);
      assert.match(yaml, /restartPolicy: Always/);
      assert.match(yaml, /manager: kubectl-create/);
      const missing = await k.run(["get", "pod", "cdry"]);
      assert.match(missing.stderr, /pods "cdry" not found/);
    });

    test("patch --type merge|json|strategic, label --overwrite, scale", async () => {
      await k.ok("create", "-f", file(`pt-${backend}.yaml`, deployment("pt", 1, "nginx:1.27")));
      await k.ok("patch", "deploy", "pt", "--type=merge", "-p", JSON.stringify({ metadata: { labels: { tier: "front" } } }));
      await k.ok("patch", "deploy", "pt", "--type=json", "-p", JSON.stringify([{ op: "replace", path: "/spec/replicas", value: 2 }]));
      await k.ok("patch", "deploy", "pt", "--type=strategic", "-p", JSON.stringify({ spec: { template: { spec: { containers: [{ name: "side", image: "busybox:1.36" }] } } } }));
      const noop = await k.ok("patch", "deploy", "pt", "--type=merge", "-p", JSON.stringify({ metadata: { labels: { tier: "front" } } }));
      assert.match(noop, /deployment.apps\/pt patched \(no change\)/);
      let d = await json("deploy", "pt");
      assert.equal(d.metadata.labels.tier, "front");
      assert.equal(d.spec.replicas, 2);
      assert.deepEqual(d.spec.template.spec.containers.map((c: { name: string }) => c.name).sort(), ["main", "side"]);
      assert.ok(d.metadata.managedFields.some((e: Entry) => e.manager === "kubectl-patch"));

      const refused = await k.run(["label", "deploy", "pt", "tier=back"]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /already has a value \(front\), and --overwrite is false/);
      assert.match(await k.ok("label", "deploy", "pt", "tier=back", "--overwrite"), /deployment.apps\/pt labeled/);
      assert.equal((await json("deploy", "pt")).metadata.labels.tier, "back");

      assert.match(await k.ok("scale", "deploy", "pt", "--replicas=5"), /deployment.apps\/pt scaled/);
      d = await json("deploy", "pt");
      assert.equal(d.spec.replicas, 5);
      assert.ok(d.metadata.managedFields.some((e: Entry) => e.subresource === "scale"), "the scale write is recorded with its subresource");
      assert.match(await k.ok("scale", "deploy", "pt", "--replicas=6", "--dry-run=server"), /scaled \(server dry run\)/);
      assert.equal((await json("deploy", "pt")).spec.replicas, 5);
    });

    test("field validation: kubectl's Strict default refuses unknown fields; --validate=warn prints the warning", async () => {
      const body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fv\ndata: {a: b}\nbogus: 1\n";
      const strict = await k.run(["create", "-f", file(`fv-${backend}.yaml`, body)]);
      assert.notEqual(strict.code, 0);
      assert.match(strict.stderr, /strict decoding error: unknown field "bogus"/);
      const warned = await k.run(["create", "--validate=warn", "-f", file(`fv2-${backend}.yaml`, body)]);
      assert.equal(warned.code, 0, warned.stderr);
      assert.match(warned.stderr, /Warning: unknown field "bogus"/);
      assert.match(warned.stdout, /configmap\/fv created/);
    });
  });
}

suite("lmdb", undefined);
suite("etcd", etcdSkipReason());
