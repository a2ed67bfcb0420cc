// End to end: the top-level `bindings` resource with kubectl 1.33 against
// `orch apiserver`: listed by `kubectl api-resources` as upstream's, a
// Binding posted with `kubectl create --raw` binds the pod it names, and a
// second one is refused with upstream's conflict.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-bindings-"));

describe("top-level bindings with kubectl", { skip: kubectlSkipReason() ?? false }, () => {
  let api: OrchProcess;
  let k: Kubectl;
  before(async () => {
    api = await startOrch("apiserver");
    k = new Kubectl(api.kubeconfig);
  });
  after(async () => {
    await api?.stop();
    rmSync(files, { recursive: true, force: true });
  });

  test("kubectl api-resources lists bindings: core v1, namespaced, kind Binding, create", async () => {
    const out = await k.ok("api-resources", "--api-group=", "-o", "wide");
    assert.match(out, /^bindings\s+v1\s+true\s+Binding\s+create\s*$/m);
  });

  test("kubectl create --raw of a Binding binds the pod; a second is a conflict", async () => {
    await k.ok("run", "p", "--image=busybox", "--restart=Never");
    const path = join(files, "binding.json");
    writeFileSync(path, JSON.stringify({ apiVersion: "v1", kind: "Binding", metadata: { name: "p" }, target: { kind: "Node", name: "node-1" } }));
    await k.ok("create", "--raw", "/api/v1/namespaces/default/bindings", "-f", path);
    assert.equal(await k.ok("get", "pod", "p", "-o", "jsonpath={.spec.nodeName}"), "node-1");
    const again = await k.run(["create", "--raw", "/api/v1/namespaces/default/bindings", "-f", path]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr + again.stdout, /pod p is already assigned to node \\"node-1\\"|pod p is already assigned to node "node-1"/);
  });
});
