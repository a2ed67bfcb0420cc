// The README's quick start and every file in examples/, as a new user runs
// them: kubectl 1.33 against `orch server` on the embedded runtime with no
// registry reachable (CI reaches none; the images are not imported, so the
// commands run on the host's root file system). The web example's pods
// answer on their own addresses and through the Service's cluster IP (the
// proxy runs, under this test's own chain prefix).
//
// What is not tested here: the same files where a registry is reachable (the
// node:20-slim image pulled); these machines reach no registry.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { getText as get } from "./support/http-text.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const PREFIX = `X${process.pid.toString(36).toUpperCase()}`.slice(0, 7);
const rootSkip = process.getuid?.() !== 0 ? "needs root (iptables, the embedded runtime's namespaces)" : undefined;
const EXAMPLES = join(packageRoot(), "examples");

describe("the README's quick start and examples/ on a machine with no registry", { skip: kubectlSkipReason() ?? rootSkip ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    // The default fallback policy, as a new user gets it (the test helpers otherwise allow every pod).
    orch = await startOrch("server", ["--node-name=examples", `--iptables-chain-prefix=${PREFIX}`, "--iptables-min-sync-period=0", "--host-root-fallback=marked"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${PREFIX}`]);
  });

  test("the quick start's commands: the node, a busybox pod marked for the host root running", async () => {
    assert.match(await k.ok("get", "nodes"), /^examples\s+Ready\s/m);
    await k.ok("run", "hello", "--image=busybox", "--annotations=orch.io/host-root=true", "--", "sleep", "3600");
    await k.ok("wait", "--for=condition=Ready", "pod/hello", "--timeout=90s");
    assert.equal((await k.ok("get", "pod", "hello", "-o", "jsonpath={.status.phase}")).trim(), "Running");
    await k.ok("delete", "pod", "hello", "--wait=false");
  });

  test("every file in examples/ applies and its workloads roll out", async () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml"));
    assert.ok(files.includes("web.yaml"));
    for (const file of files) {
      await k.ok("apply", "-f", join(EXAMPLES, file));
      const deployments = (await k.ok("get", "-f", join(EXAMPLES, file), "-o", "jsonpath={range .items[?(@.kind==\"Deployment\")]}{.metadata.name} {end}")).trim().split(" ").filter((n) => n !== "");
      for (const name of deployments) await k.ok("rollout", "status", `deployment/${name}`, "--timeout=90s");
    }
  });

  test("web.yaml: each replica answers on its pod address, and the Service reaches both", async () => {
    const pods = JSON.parse(await k.ok("get", "pods", "-l", "app=web", "-o", "json")).items as { metadata: { name: string }; status: { podIP: string } }[];
    assert.equal(pods.length, 2);
    for (const pod of pods) assert.equal(await get(pod.status.podIP, 8080), `hello from ${pod.metadata.name}`);
    const ip = (await k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
    await eventually(() => get(ip, 80).catch(() => undefined), 20_000, "the service address to answer");
    // The proxy follows the endpoints: both replicas are in its rules a moment after both are ready.
    const seen = new Set<string>();
    for (const deadline = Date.now() + 20_000; seen.size < 2 && Date.now() < deadline; ) seen.add(await get(ip, 80));
    assert.deepEqual([...seen].sort(), pods.map((p) => `hello from ${p.metadata.name}`).sort());
  });
});
