// End to end: the naming table reaches every program of `orch server` (API
// server, controllers, scheduler, node agent with the embedded runtime). On
// each profile (default orch.io, and --api-group-suffix=k8s.io) the test waits
// for the node Ready and a Deployment's pod Running, then dumps every stored
// object of every listable kind (from discovery) and looks at every key and
// string for the other profile's names. None is allowed but the exceptions
// listed below, each with its reason. A node agent joining with --join takes
// the server's names too. Root only (the embedded runtime makes
// namespaces and mounts).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startJoinedAgent, startOrch, type OrchProcess } from "./support/orch-process.js";

interface Exception {
  readonly match: RegExp;
  readonly reason: string;
}

interface Profile {
  readonly name: string;
  readonly args: readonly string[];
  /** Names of the other profile. */
  readonly foreign: RegExp;
  readonly exceptions: readonly Exception[];
  /** Resources served as views of others under upstream's group names (api/alias-group.ts): they show those names by design, and their objects are listed under the profile's own group. */
  readonly aliases?: RegExp;
  /** What this profile's names look like where they must appear. */
  readonly expect: { hostnameLabel: string; leaseNamespace: string; managers: readonly string[] };
}

const PROFILES: readonly Profile[] = [
  {
    name: "default (orch.io)",
    args: [],
    foreign: /k8s\.io|kubernetes\.io|kube-system|kube-public|kube-node-lease|kubelet|kube-controller-manager|kube-scheduler|kube-proxy/,
    exceptions: [
      { match: /^(f:)?deployment\.kubernetes\.io\/revision$/, reason: "kubectl rollout history and undo read revisions under this fixed key, whatever the server's names" },
      { match: /^(f:)?kubernetes\.io\/bootstrapping$|^(f:)?rbac\.authorization\.kubernetes\.io\/autoupdate$/, reason: "the RBAC bootstrap marks keep upstream's keys: kubectl and tools look for them" },
      { match: /^(authorization|authentication|rbac\.authorization)\.k8s\.io$/, reason: "bootstrap roles grant the review kinds (and admin the RBAC kinds) under both spellings: kubectl auth can-i, whoami and reconcile ask upstream's group on every server" },
      { match: /^(f:)?kubelet(Endpoint|Version)$/, reason: "Node's wire field names (status.daemonEndpoints.kubeletEndpoint, status.nodeInfo.kubeletVersion) are the schema's, not the table's" },
      { match: /^system:kubelet-api-admin$/, reason: "upstream's bootstrap ClusterRole name, kept on both profiles (as system:node and the other bootstrap roles) so manifests that bind to it work" },
      { match: /^(v1beta1\.)?metrics\.k8s\.io(\/v1beta1)?$/, reason: "the resource metrics API (and the HPA controller role that reads it) keeps upstream's group on both profiles: kubectl top and autoscalers ask for metrics.k8s.io by that name (its objects are computed, never stored; its local APIService is v1beta1.metrics.k8s.io)" },
    ],
    aliases: /\.(rbac\.authorization|certificates)\.k8s\.io$/,
    expect: { hostnameLabel: "orch.io/hostname", leaseNamespace: "orch-node-lease", managers: ["orch-controller-manager", "orch-nodeagent"] },
  },
  {
    name: "k8s.io",
    args: ["--api-group-suffix=k8s.io"],
    foreign: /orch/,
    exceptions: [
      { match: /^orch-embedded:\/\//, reason: "the container runtime's own name in runtime versions and container ids (as containerd:// is containerd's)" },
      { match: /^[a-z0-9.-]+_orch-server-[0-9a-f]+$/, reason: "the leader-election identity names the process holding the lease (host_process-id), not a name of the table" },
      { match: /^v\d+\.\d+\.\d+\+orch\.\S+$/, reason: "the version reported (the node's kubeletVersion, as /version): the API version orch serves with orch's own as its build suffix, as k3s's v1.33.0+k3s1" },
    ],
    expect: { hostnameLabel: "kubernetes.io/hostname", leaseNamespace: "kube-node-lease", managers: ["kube-controller-manager", "kubelet"] },
  },
];

const notRoot = process.getuid?.() !== 0 ? "needs root: orch server's node agent runs pods in the embedded runtime" : undefined;
if (notRoot !== undefined) console.log(`# skipping naming-profiles: ${notRoot}`);

/** Every object key and string value in `value`, with where it was found. */
function* strings(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === "string") yield [value, path];
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* strings(value[i], `${path}[${i}]`);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      yield [k, `${path}.${k} (key)`];
      yield* strings(v, `${path}.${k}`);
    }
  }
}

for (const profile of PROFILES) {
  describe(`orch server writes only its own names: ${profile.name}`, { skip: notRoot ?? kubectlSkipReason() ?? false }, () => {
    let orch: OrchProcess;
    let k: Kubectl;
    before(async () => {
      orch = await startOrch("server", [...profile.args], { readyTimeoutMs: 60_000 });
      k = new Kubectl(orch.kubeconfig);
    });
    after(async () => orch?.stop());

    test("node Ready, a Deployment's pod Running, its lease renewed; then no stored object names the other profile", async () => {
      await k.ok("create", "deployment", "web", "--image=busybox:1.36", "--", "sleep", "100000");
      // kubectl wait fails at once when nothing matches yet: wait for the ReplicaSet's pod to exist first.
      for (const deadline = Date.now() + 60_000; (await k.ok("get", "pods", "-l", "app=web", "-o", "name")).trim() === ""; ) {
        assert.ok(Date.now() < deadline, "the Deployment's pod was never created");
        await new Promise((r) => setTimeout(r, 200));
      }
      const ready = await k.run(["wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=60s"], { timeoutMs: 70_000 });
      assert.equal(ready.code, 0, ready.stderr + ready.stdout);
      const node = JSON.parse(await k.ok("get", "nodes", "-o", "json")).items[0];
      assert.equal(node.status.conditions.find((c: { type: string }) => c.type === "Ready").status, "True");
      assert.ok(node.metadata.labels[profile.expect.hostnameLabel], `node labels: ${JSON.stringify(node.metadata.labels)}`);
      const lease = JSON.parse(await k.ok("get", "lease", node.metadata.name, "-n", profile.expect.leaseNamespace, "-o", "json"));
      assert.equal(lease.spec.holderIdentity, node.metadata.name);
      assert.doesNotMatch(orch.output(), /could not find the requested resource/, "no part of orch server asked for a path the server does not serve");

      // Every listable kind, from discovery.
      const resources = (await k.ok("api-resources", "--verbs=list", "-o", "name")).split("\n").filter((r) => r !== "" && !(profile.aliases?.test(r) ?? false));
      assert.ok(resources.length >= 20, resources.join(" "));
      const managers = new Set<string>();
      const offences: string[] = [];
      const excused = new Map<string, number>();
      for (const resource of resources) {
        const list = JSON.parse(await k.ok("get", resource, "--all-namespaces", "-o", "json", "--show-managed-fields"));
        for (const item of list.items) {
          for (const entry of item.metadata.managedFields ?? []) managers.add(entry.manager);
          const where = `${resource} ${item.metadata.namespace ? `${item.metadata.namespace}/` : ""}${item.metadata.name}`;
          for (const [s, path] of strings(item, "")) {
            if (!profile.foreign.test(s)) continue;
            const exception = profile.exceptions.find((e) => e.match.test(s));
            if (exception !== undefined) excused.set(exception.reason, (excused.get(exception.reason) ?? 0) + 1);
            else offences.push(`${where} ${path}: ${JSON.stringify(s.slice(0, 120))}`);
          }
        }
      }
      assert.deepEqual(offences, [], `names of the other profile in stored objects:\n${offences.join("\n")}`);
      for (const m of profile.expect.managers) assert.ok(managers.has(m), `field manager ${m} among ${[...managers].join(", ")}`);
      for (const [reason, n] of excused) console.log(`# allowed ${n}×: ${reason}`);
    });

    test("a node agent joining this server (orch server --join) takes the server's names", async () => {
      const token = readFileSync(join(orch.dataDir, "join.token"), "utf8").trim();
      const joined = await startJoinedAgent(["--join", orch.url, "--token", token, "--certificate-authority", join(orch.dataDir, "ca.crt")], "joined", { readyTimeoutMs: 60_000 });
      try {
        const node = JSON.parse(await k.ok("get", "node", "joined", "-o", "json"));
        const foreign = Object.keys(node.metadata.labels).filter((key) => profile.foreign.test(key));
        assert.deepEqual(foreign, [], `labels: ${JSON.stringify(node.metadata.labels)}`);
        assert.ok(node.metadata.labels[profile.expect.hostnameLabel]);
        const lease = JSON.parse(await k.ok("get", "lease", "joined", "-n", profile.expect.leaseNamespace, "-o", "json"));
        assert.equal(lease.spec.holderIdentity, "joined");
        assert.doesNotMatch(joined.output(), /could not find the requested resource/);
      } finally {
        await joined.stop();
      }
    });
  });
}
