// End to end: an HA control plane of three `orch server` processes on
// loopback (issue 20), each with its own ports and data folder: the first
// with --cluster-init, the other two joining with --join URL --control-plane
// --token "$(cat DATA_DIR/server.token)". Each runs an etcd member, an API
// server, leader-elected controllers and scheduler, and a node agent
// (embedded runtime: containers are host processes). kubectl 1.33 sees three
// nodes and runs a Deployment of 3. Then the server holding the controller
// manager's and the scheduler's leases is killed with SIGKILL (its etcd member
// dies with it): through a surviving server kubectl keeps working, etcd keeps
// quorum, the leases move, a scale-up is scheduled and run on the survivors,
// and the lost node's pods are replaced there. The killed server restarts
// from its data folder, its member rejoins and its node is Ready again.
// Then a second, different member is killed (and restarted) and the cluster
// keeps serving and scaling. Last, every member is stopped and all are
// started again together: the objects are there and the pods run again. A node agent joined with --join naming the first
// server stays Ready through its loss (its load balancer moves to another
// server from the list the control plane publishes). The fail-over times are printed (# lines) for
// docs/reliability.md. Root only (the embedded runtime's containers), run
// under the e2e lock.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { sleep } from "../../src/machinery/until.js";
import { EtcdCluster } from "../../src/storage/etcd/index.js";
import { etcdClientTls, etcdPaths, loadMemberConfig } from "../../src/cli/etcd-member.js";
import { Kubectl, kubectlSkipReason } from "../support/kubectl.js";
import { deploymentYaml } from "../support/manifests.js";
import { startJoinedAgent, startOrch, type JoinedAgentProcess, type OrchProcess } from "../support/orch-process.js";

const root = process.getuid?.() === 0;
const etcdMissing = (() => {
  try {
    readFileSync(process.env.ETCD_BIN ?? "/usr/bin/etcd");
    return undefined;
  } catch {
    return "etcd not found (/usr/bin/etcd: apt-get install etcd-server)";
  }
})();
const skip = kubectlSkipReason() ?? etcdMissing ?? (root ? undefined : "not root: the embedded runtime's containers need root");
if (skip !== undefined) console.log(`# skipping the HA control-plane e2e: ${skip}`);

const files = mkdtempSync(join(tmpdir(), "orch-e2e-ha-"));
// A sleep length no other process uses, so `pgrep -f` finds exactly this suite's containers.
const TOKEN = String(800_000 + (process.pid % 100_000));
// Above the agents' lease renewal (every 10 s), with room for a loaded machine.
const GRACE_S = 20;

// Pods evicted as soon as their node is found unreachable (the test need not wait out the default 300 s), spread over the nodes.
const DEPLOYMENT = deploymentYaml("web", 3, "busybox:1.36", `        command: [sleep, "${TOKEN}"]
      terminationGracePeriodSeconds: 1
      tolerations:
      - {key: node.orch.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 0}
      - {key: node.orch.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 0}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
`);

interface PodJson {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}

interface Member {
  name: string;
  dataDir: string;
  args: string[];
  proc: OrchProcess | undefined;
}

/** Polls `check` every 500 ms until it answers truthy; fails naming `what` (and the last error) after `ms`. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await sleep(500);
  }
}

const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);

describe("HA control plane: three orch servers on one etcd cluster survive the loss of a member", { skip: skip ?? false, timeout: 600_000 }, () => {
  const members: Member[] = [0, 1, 2].map((i) => ({ name: `ha-${i}`, dataDir: mkdtempSync(join(tmpdir(), `orch-e2e-ha-${i}-`)), args: [], proc: undefined }));
  const timings: string[] = [];
  const start = async (m: Member, args: string[]) => {
    m.proc = await startOrch("server", [`--node-name=${m.name}`, `--node-monitor-grace-period=${GRACE_S}s`, ...args], { dataDir: m.dataDir, readyTimeoutMs: 120_000 });
  };
  const kubectl = (m: Member) => new Kubectl(join(m.dataDir, "admin.kubeconfig"));
  const alive = () => members.filter((m) => m.proc !== undefined);
  // A node agent joined from "another machine" with --join naming the first server: its load balancer must carry it over.
  let agent: JoinedAgentProcess | undefined;
  const AGENT = "ha-agent";
  let firstVictim: Member | undefined;

  before(async () => {
    await start(members[0]!, ["--cluster-init"]);
    const token = readFileSync(join(members[0]!.dataDir, "server.token"), "utf8").trim();
    // One at a time: a member added but not yet started counts towards the quorum the next add needs.
    for (const m of members.slice(1)) await start(m, ["--join", members[0]!.proc!.url, "--control-plane", "--token", token]);
    const joinToken = readFileSync(join(members[0]!.dataDir, "join.token"), "utf8").trim();
    agent = await startJoinedAgent(["--join", members[0]!.proc!.url, "--token", joinToken], AGENT, { readyTimeoutMs: 120_000 });
  });

  after(async () => {
    await agent?.stop().catch(() => {});
    for (const m of members) await m.proc?.stop().catch(() => {});
    await new Promise<void>((resolve) => execFile("pkill", ["-KILL", "-f", `^sleep ${TOKEN}$`], () => resolve()));
    for (const m of members) rmSync(m.dataDir, { recursive: true, force: true, maxRetries: 10 });
    rmSync(files, { recursive: true, force: true });
    if (timings.length > 0) console.log(timings.map((t) => `# ${t}`).join("\n"));
  });

  /** The member list as one member's etcd answers it (with the client certificate from its data folder). */
  const etcdMembers = async (via: Member) => {
    const paths = etcdPaths(via.dataDir);
    const cluster = new EtcdCluster({ endpoints: [loadMemberConfig(paths)!.clientUrl], tls: etcdClientTls(paths), requestTimeoutMs: 3000 });
    try {
      await cluster.status();
      return await cluster.members();
    } finally {
      cluster.close();
    }
  };
  /** Which member's server holds the lease (the identity is the host name and a digest of the data folder). */
  const holderOf = async (k: Kubectl, lease: string) => {
    const identity = (await k.ok("get", "lease", "-n", "orch-system", lease, "-o", "jsonpath={.spec.holderIdentity}")).trim();
    return members.find((m) => identity === `${hostname()}_orch-server-${createHash("sha256").update(realpathSync(m.dataDir)).digest("hex").slice(0, 12)}`);
  };
  const pods = async (k: Kubectl) =>
    (JSON.parse(await k.ok("get", "pods", "-l", "app=web", "-o", "json")).items as PodJson[]).filter((p) => !p.metadata.deletionTimestamp);
  const runningOn = async (k: Kubectl, n: number, nodes: string[]) => {
    const ps = await pods(k);
    const ok = ps.filter((p) => p.status.phase === "Running" && nodes.includes(p.spec.nodeName ?? "") && p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
    return ps.length === n && ok.length === n ? ps : undefined;
  };
  const nodeReady = async (k: Kubectl, name: string) =>
    (await k.ok("get", "node", name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)).trim() === "True";

  test("three members form one etcd cluster; kubectl sees three Ready nodes; a Deployment of 3 runs", async () => {
    const list = await etcdMembers(members[2]!);
    assert.deepEqual(list.map((m) => m.name).sort(), ["ha-0", "ha-1", "ha-2"]);
    assert.ok(list.every((m) => m.clientURLs[0]?.startsWith("https://")), "members serve clients over TLS");
    const k = kubectl(members[1]!);
    await until("four Ready nodes (three servers, one joined agent)", 60_000, async () => {
      const out = await k.ok("get", "nodes", "--no-headers");
      return out.trim().split("\n").filter((l) => / Ready /.test(l)).length === 4;
    });
    // The joined agent learned every server from the published list.
    assert.match(agent!.output(), /ready: node ha-agent joined .*through the load balancer/);
    await k.ok("apply", "-f", file("web.yaml", DEPLOYMENT));
    await until("3 web pods Running", 90_000, () => runningOn(k, 3, [...members.map((m) => m.name), AGENT]));
    // Every server answers for the same cluster: the admin token is shared.
    // The Deployment's status follows its pods' readiness a moment later (the controller's next sync): wait for it.
    for (const m of members) await until(`${m.name} shows web 3/3`, 30_000, async () => /^web +3\/3/.test(await kubectl(m).ok("get", "deployment", "web", "--no-headers")));
  });

  test("kill -9 the member holding the controller and scheduler leases: the rest keep serving, fail over, scale and replace its pods; it restarts and rejoins", async () => {
    const k0 = kubectl(members[0]!);
    const controllers = await holderOf(k0, "orch-controller-manager");
    const scheduler = await holderOf(k0, "orch-scheduler");
    assert.ok(controllers !== undefined && scheduler !== undefined, "the leases name one of the members");
    // Kill the controllers' leader (and the scheduler's, when another member holds it, before the next step).
    // The agent joined through members[0]: kill that one when it leads (the usual case: it started first).
    const victim = controllers;
    firstVictim = victim;
    const survivors = members.filter((m) => m !== victim);
    const k = kubectl(survivors[0]!);
    const killedAt = Date.now();
    await victim.proc!.stop("SIGKILL");
    victim.proc = undefined;
    if (scheduler !== victim) timings.push(`the scheduler's lease was held by ${scheduler.name}, a survivor: no scheduler fail-over`);

    await until("kubectl through a surviving server", 30_000, async () => (await k.run(["get", "nodes"])).code === 0);
    timings.push(`kill -9 of ${victim.name}: kubectl via a surviving server answered after ${seconds(killedAt)} s`);
    const list = await until("etcd quorum through a survivor", 30_000, () => etcdMembers(survivors[0]!));
    assert.equal(list.length, 3, "the dead member is still a member (it may come back)");
    timings.push(`etcd answered (quorum of 2/3) after ${seconds(killedAt)} s`);

    await until("the controller manager's lease on a survivor", 60_000, async () => survivors.includes((await holderOf(k, "orch-controller-manager"))!));
    timings.push(`controller manager lease taken over after ${seconds(killedAt)} s`);
    await until("the scheduler's lease on a survivor", 60_000, async () => survivors.includes((await holderOf(k, "orch-scheduler"))!));
    timings.push(`scheduler lease on a survivor after ${seconds(killedAt)} s`);

    // A scale-up after the loss: new pods need the controllers (ReplicaSet) and the scheduler, both failed over.
    await k.ok("scale", "deployment/web", "--replicas=5");
    const survivorNames = [...survivors.map((m) => m.name), AGENT];
    await until("5 web pods Running on the survivors (scale-up and the lost node's pods replaced)", 120_000, () => runningOn(k, 5, survivorNames)).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await k.ok("get", "pods,nodes", "-o", "wide")}`);
    });
    timings.push(`scaled to 5 and the lost node's pods replaced, all Running on the survivors, after ${seconds(killedAt)} s`);
    // The joined agent kept its node Ready through the loss (its grace period has passed by now).
    assert.ok(await nodeReady(k, AGENT), "the joined agent's node is Ready");
    if (victim === members[0]) assert.match(agent!.output(), /load balancer: \S+ does not answer; switching to/);

    // The killed server restarts from its data folder: its etcd member rejoins, its node is Ready again.
    const restartAt = Date.now();
    await start(victim, []);
    await until("the restarted member's node Ready", 60_000, () => nodeReady(k, victim.name));
    const rejoined = await until("the restarted member serving etcd", 30_000, () => etcdMembers(victim));
    assert.deepEqual(rejoined.map((m) => m.name).sort(), ["ha-0", "ha-1", "ha-2"]);
    assert.match(await kubectl(victim).ok("get", "deployment", "web", "--no-headers"), /^web +5\/5/);
    timings.push(`${victim.name} restarted and rejoined (ready line, node Ready, etcd serving) in ${seconds(restartAt)} s`);
  });

  test("kill -9 a second, different member: the cluster keeps serving and scaling", async () => {
    const k = kubectl(alive()[0]!);
    const leaders = new Set([await holderOf(k, "orch-controller-manager"), await holderOf(k, "orch-scheduler")]);
    // Not the first victim, so each kill takes down a different member; one leading nothing when there is one.
    const others = alive().filter((m) => m !== firstVictim);
    const victim = others.find((m) => !leaders.has(m)) ?? others[0]!;
    if (leaders.has(victim)) timings.push(`second kill: ${victim.name} held a lease`);
    const survivor = alive().find((m) => m !== victim)!;
    const ks = kubectl(survivor);
    const killedAt = Date.now();
    await victim.proc!.stop("SIGKILL");
    victim.proc = undefined;
    await until("kubectl through a surviving server", 30_000, async () => (await ks.run(["get", "nodes"])).code === 0);
    await ks.ok("scale", "deployment/web", "--replicas=6");
    const names = [...alive().map((m) => m.name), AGENT];
    await until("6 web pods Running on the two survivors", 120_000, () => runningOn(ks, 6, names));
    timings.push(`kill -9 of ${victim.name}: scaled to 6 on the survivors after ${seconds(killedAt)} s`);
    await start(victim, []);
    await until("its node Ready again", 60_000, () => nodeReady(ks, victim.name));
  });

  test("stop every member, then start them all at once: the cluster comes back with its objects and runs the Deployment again", async () => {
    for (const m of alive()) {
      await m.proc!.stop();
      m.proc = undefined;
    }
    // Together: one member alone has no etcd quorum, so none can get ready before a second one starts.
    const restartAt = Date.now();
    await Promise.all(members.map((m) => start(m, [])));
    timings.push(`whole control plane stopped and started again: three ready lines after ${seconds(restartAt)} s`);
    const k = kubectl(members[2]!);
    assert.deepEqual((await etcdMembers(members[1]!)).map((m) => m.name).sort(), ["ha-0", "ha-1", "ha-2"]);
    assert.match(await k.ok("get", "deployment", "web", "--no-headers"), /^web +\d\/6/);
    await until("6 web pods Running after the restart", 180_000, () => runningOn(k, 6, [...members.map((m) => m.name), AGENT])).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await k.ok("get", "pods,nodes", "-o", "wide")}`);
    });
    timings.push(`after the whole restart, 6 web pods Running again after ${seconds(restartAt)} s`);
    // Down for longer than the grace period, its node may have been marked NotReady first: it must come back.
    await until("the joined agent's node Ready again", 60_000, () => nodeReady(k, AGENT));
  });
});

function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}
