// End to end: a real `orch apiserver`, two real `orch scheduler` replicas
// (leader election on, the default) and the real kubectl 1.33. Nodes are
// objects the test creates (no node agent): only the lease holder binds;
// a pod with an unsatisfiable nodeSelector stays Pending with upstream's
// condition, as `kubectl get` and `describe` show it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { makeNode } from "../src/scheduler/testing/objects.js";
import { eventually } from "../src/controllers/testing.js";
import { httpsGet } from "../src/component/testing/https-get.js";

const BIN = fileURLToPath(new URL("../../bin/orch.js", import.meta.url));

interface Replica {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function startReplica(kubeconfig: string): Replica {
  const child = spawn(process.execPath, [BIN, "scheduler", "--kubeconfig", kubeconfig, "--secure-port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Polls (20 s by default: child processes on a loaded machine). */
const until = <T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000) => eventually(what, check, ms);

describe("orch scheduler replicas with kubectl 1.33", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const replicas: Replica[] = [];
  before(async () => {
    orch = await startOrch("apiserver");
    k = new Kubectl(orch.kubeconfig);
    for (const name of ["node-a", "node-b"]) {
      const r = await k.run(["create", "-f", "-"], { input: JSON.stringify(makeNode(name, { labels: { disk: "hdd" } })) });
      assert.equal(r.code, 0, r.stderr);
    }
    replicas.push(startReplica(orch.kubeconfig), startReplica(orch.kubeconfig));
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await orch.stop();
  });

  test("only the lease holder binds; the other takes over when it stops", async () => {
    const holder = await until("a lease holder", async () => {
      const r = await k.run(["get", "lease", "-n", "orch-system", "orch-scheduler", "-o", "jsonpath={.spec.holderIdentity}"]);
      return r.code === 0 && r.stdout !== "" ? r.stdout : undefined;
    });
    const leader = await until("the leader's log", () => replicas.find((r) => r.output().includes(`acquired lease orch-system/orch-scheduler`)));
    const follower = replicas.find((r) => r !== leader)!;
    assert.ok(!follower.output().includes("acquired lease"), "one holder at a time");
    assert.ok(holder.length > 0);
    await k.ok("run", "web", "--image=nginx:1.27", "--restart=Never");
    const node = await until("web bound", async () => (await k.ok("get", "pod", "web", "-o", "jsonpath={.spec.nodeName}")) || undefined);
    assert.match(node, /^node-[ab]$/);
    assert.ok(leader.output().includes("caches synced"));
    assert.ok(!follower.output().includes("caches synced"), "the follower never started scheduling");
    // /readyz on each replica's --secure-port: the leader is ready, the follower (no caches) is not.
    // (A replica started on a loaded machine may not have printed its address yet: wait for it.)
    const url = (r: Replica) => until("the replica's address", () => /serving health and metrics on (https:\/\/\S+)/.exec(r.output())?.[1]);
    assert.equal((await httpsGet(`${await url(leader)}/readyz`)).status, 200);
    const notReady = await httpsGet(`${await url(follower)}/readyz?verbose`);
    assert.equal(notReady.status, 500);
    assert.match(notReady.text, /sched-handler-sync/);
    await leader.stop();
    await until("the follower takes over", () => follower.output().includes("acquired lease orch-system/orch-scheduler"));
    await k.ok("run", "web2", "--image=nginx:1.27", "--restart=Never");
    await until("web2 bound", async () => (await k.ok("get", "pod", "web2", "-o", "jsonpath={.spec.nodeName}")) || undefined);
  });

  test("a pod with an unsatisfiable nodeSelector stays Pending with the Unschedulable condition", async () => {
    await k.ok("run", "picky", "--image=nginx:1.27", "--restart=Never", "--overrides", JSON.stringify({ spec: { nodeSelector: { disk: "ssd" } } }));
    const message = await until("the condition", async () => {
      const out = await k.ok("get", "pod", "picky", "-o", 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}');
      return out || undefined;
    });
    assert.equal(
      message,
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
    );
    assert.equal(await k.ok("get", "pod", "picky", "-o", 'jsonpath={.status.phase}{" "}{.status.conditions[?(@.type=="PodScheduled")].reason}'), "Pending Unschedulable");
    const wide = await k.ok("get", "pod", "picky");
    assert.match(wide, /picky\s+0\/1\s+Pending/);
    // kubectl describe shows the scheduler's events: FailedScheduling here, Scheduled for a pod that was placed.
    const picky = await until("FailedScheduling event", async () => {
      const out = await k.ok("describe", "pod", "picky");
      return out.includes("FailedScheduling") ? out : undefined;
    });
    assert.match(picky, /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/2 nodes are available: 2 node\(s\) didn't match Pod's node affinity\/selector\./);
    const web = await until("Scheduled event", async () => {
      const out = await k.ok("describe", "pod", "web");
      return out.includes("Scheduled") ? out : undefined;
    });
    assert.match(web, /Normal\s+Scheduled\s+.*default-scheduler\s+Successfully assigned default\/web to node-[ab]/);
  });
});
