// The benchmark's kubelet column: how the binary is found or skipped, and
// (where the binary and containerd are here) that upstream's kubelet started
// as bench/nodeagent starts it joins an orch API server on the k8s.io profile,
// turns its Node Ready and runs a pod to Running. The binary comes from
// $KUBELET_BIN, else $UPSTREAM_BIN/kubelet (default /tmp/upstream-k8s/bin, as
// test/upstream-components.e2e); without it the second test skips saying so.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeletBinary, startKubelet } from "./upstream-kubelet.js";
import { builtinModules } from "../../src/api/index.js";
import type { Node, Pod } from "../../src/api/core/types.js";
import { startTestServer } from "../../src/apiserver/testing/harness.js";
import { RestClient, loadKubeconfig } from "../../src/client/index.js";
import { buildBusyboxImage } from "../../test/support/busybox-image.js";
import { SANDBOX_IMAGE, containerdSkipReason, startContainerd } from "../../test/support/containerd.js";

const binary = process.env["KUBELET_BIN"] ?? join(process.env["UPSTREAM_BIN"] ?? "/tmp/upstream-k8s/bin", "kubelet");
const skip = containerdSkipReason() ?? (existsSync(binary) ? undefined : `no upstream kubelet at ${binary} (set KUBELET_BIN; build it with ../shared/tools/upstream/build.sh)`);

async function until(probe: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("bench kubelet column", () => {
  it("skips with a reason when no binary is given or the path is not executable", () => {
    const saved = process.env["KUBELET_BIN"];
    delete process.env["KUBELET_BIN"];
    const dir = mkdtempSync(join(tmpdir(), "kubelet-bin-"));
    try {
      assert.match((kubeletBinary([]) as { skip: string }).skip, /no upstream kubelet \(set KUBELET_BIN or --kubelet=PATH\)/);
      const file = join(dir, "kubelet");
      writeFileSync(file, "");
      chmodSync(file, 0o644);
      assert.match((kubeletBinary([`--kubelet=${file}`]) as { skip: string }).skip, /not an executable file/);
      chmodSync(file, 0o755);
      assert.deepEqual(kubeletBinary([`--kubelet=${file}`]), { path: file });
      process.env["KUBELET_BIN"] = file;
      assert.deepEqual(kubeletBinary([]), { path: file });
    } finally {
      if (saved === undefined) delete process.env["KUBELET_BIN"];
      else process.env["KUBELET_BIN"] = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("upstream's kubelet joins orch (k8s.io profile) on containerd: Node Ready, a pod Running", { skip, timeout: 300_000 }, async () => {
    const server = await startTestServer({ modules: builtinModules(), groupSuffix: "k8s.io" });
    const client = new RestClient(loadKubeconfig(server.server.kubeconfigPath));
    const containerd = await startContainerd();
    const dir = mkdtempSync(join(tmpdir(), "kubelet-column-"));
    const kubelet = await startKubelet(binary, { kubeconfig: server.server.kubeconfigPath, runtimeEndpoint: containerd.endpoint, pauseImage: SANDBOX_IMAGE, nodeName: "kubelet-test" });
    try {
      await buildBusyboxImage({ file: join(dir, "busybox.tar") });
      await containerd.importImage(join(dir, "busybox.tar"));
      const nodes = { group: "", version: "v1", resource: "nodes", namespaced: false };
      const pods = { group: "", version: "v1", resource: "pods", namespaced: true };
      await until(async () => (await client.get<Node>(nodes, { name: "kubelet-test" })).status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false, 120_000, `the Node Ready; kubelet log:\n${kubelet.output().slice(-4000)}`);
      const node = await client.get<Node>(nodes, { name: "kubelet-test" });
      assert.equal(node.status?.nodeInfo?.kubeletVersion, "v1.23.16", "the Node is the kubelet's");
      await client.create<Pod>(pods, {
        apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default" },
        spec: { nodeName: "kubelet-test", terminationGracePeriodSeconds: 0, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"] }] },
      });
      await until(async () => (await client.get<Pod>(pods, { namespace: "default", name: "p" })).status?.phase === "Running", 120_000, `the pod Running; kubelet log:\n${kubelet.output().slice(-4000)}`);
      const { items } = await containerd.client.listPodSandbox({});
      assert.ok(items.some((s) => s.labels["io.kubernetes.pod.name"] === "p"), "the kubelet made the sandbox on this containerd");
      await client.delete(pods, { namespace: "default", name: "p", gracePeriodSeconds: 0 });
    } finally {
      await kubelet.stop();
      await containerd.stop();
      client.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
