// End to end with kubectl 1.33 against a real `orch server` (embedded
// runtime): what the node agent does for a pod that upstream's kubelet does
// and conformance checks. The agent-managed /etc/hosts (read with kubectl
// exec): the pod's IP with its name, its FQDN under a subdomain, hostAliases;
// a container mounting its own /etc/hosts keeps it; a host-network pod sees
// the node's file under its header. activeDeadlineSeconds set on a running
// pod fails it with DeadlineExceeded and stops its container.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-node-pods-"));
const TOKEN = suiteToken(710_000);
const LOCAL = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";
const skip = kubectlSkipReason() ?? (process.getuid?.() !== 0 ? "needs root (pods run in namespaces)" : undefined);

describe("the node agent's pod behaviour, through kubectl", { skip: skip ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const apply = async (name: string, yaml: string) => {
    const path = join(files, `${name}.yaml`);
    writeFileSync(path, yaml);
    await k.ok("create", "-f", path);
  };
  const container = (name: string, mounts = "") => `  - name: ${name}\n    image: busybox\n    command: [sh, -c, "sleep ${TOKEN}"]\n${mounts}`;
  const podIP = async (name: string) => (await k.ok("get", "pod", name, "-o", "jsonpath={.status.podIP}")).trim();
  const hosts = async (pod: string, c?: string) => k.ok("exec", pod, ...(c ? ["-c", c] : []), "--", "cat", "/etc/hosts");

  before(async () => {
    orch = await startOrch("server", ["--node-name=node-pods"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    writeFileSync(join(files, "own-hosts"), "# the container's own\n10.9.9.9\town\n");
    await apply("aliases", `apiVersion: v1\nkind: Pod\nmetadata: {name: aliases}\nspec:\n  terminationGracePeriodSeconds: 1\n  hostname: querier\n  subdomain: svc-a\n  hostAliases:\n  - {ip: 123.45.67.89, hostnames: [foo.local, bar.local]}\n  - {ip: "::2", hostnames: [two.local]}\n  volumes:\n  - {name: own, hostPath: {path: ${join(files, "own-hosts")}, type: File}}\n  containers:\n${container("managed")}${container("own", "    volumeMounts: [{name: own, mountPath: /etc/hosts}]\n")}`);
    await apply("plain", `apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n${container("main")}`);
    await apply("hostnet", `apiVersion: v1\nkind: Pod\nmetadata: {name: hostnet}\nspec:\n  terminationGracePeriodSeconds: 1\n  hostNetwork: true\n  hostAliases:\n  - {ip: 1.2.3.4, hostnames: [one.local]}\n  containers:\n${container("main")}`);
    await k.ok("wait", "--for=condition=Ready", "pod/aliases", "pod/plain", "pod/hostnet", "--timeout=90s");
  });
  after(async () => {
    await orch?.stop();
    await killMatching(`sleep ${TOKEN}`);
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("a pod's /etc/hosts names its IP with its hostname, under the managed header", async () => {
    const ip = await podIP("plain");
    assert.notEqual(ip, "");
    assert.equal(await hosts("plain"), `# Kubernetes-managed hosts file.\n${LOCAL}${ip}\tplain\n`);
  });

  test("with hostname and subdomain the FQDN comes first; hostAliases are listed after their comment", async () => {
    const ip = await podIP("aliases");
    assert.equal(
      await hosts("aliases", "managed"),
      `# Kubernetes-managed hosts file.\n${LOCAL}${ip}\tquerier.svc-a.default.svc.cluster.local\tquerier\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo.local\tbar.local\n::2\ttwo.local\n`,
    );
    // getent reads it as a resolver would.
    assert.match(await k.ok("exec", "aliases", "-c", "managed", "--", "getent", "hosts", "foo.local"), /^123\.45\.67\.89\s+foo\.local/);
  });

  test("a container that mounts its own /etc/hosts keeps it", async () => {
    assert.equal(await hosts("aliases", "own"), readFileSync(join(files, "own-hosts"), "utf8"));
  });

  test("a host-network pod sees the node's /etc/hosts under its own header, then its aliases", async () => {
    assert.equal(await hosts("hostnet"), `# Kubernetes-managed hosts file (host network).\n${readFileSync("/etc/hosts", "utf8")}\n# Entries added by HostAliases.\n1.2.3.4\tone.local\n`);
  });

  test("activeDeadlineSeconds set on a running pod fails it with DeadlineExceeded and stops its container", async () => {
    await k.ok("patch", "pod", "plain", "-p", '{"spec":{"activeDeadlineSeconds":2}}');
    const status = await eventually("the pod failed", async () => {
      const s = JSON.parse(await k.ok("get", "pod", "plain", "-o", "jsonpath={.status}")) as { phase?: string; reason?: string; message?: string; containerStatuses?: { state?: { terminated?: unknown } }[] };
      return s.phase === "Failed" && s.containerStatuses?.[0]?.state?.terminated ? s : undefined;
    }, 30_000);
    assert.equal(status.reason, "DeadlineExceeded");
    assert.equal(status.message, "Pod was active on the node longer than the specified deadline");
    const events = await k.ok("get", "events", "--field-selector", "involvedObject.name=plain,reason=DeadlineExceeded", "-o", "jsonpath={.items[*].type}");
    assert.equal(events.trim(), "Normal");
  });
});
