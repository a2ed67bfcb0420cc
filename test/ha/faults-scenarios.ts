// The fault scenarios of the suite, shared by faults.e2e.test.ts (which
// asserts) and faults-report.ts (which prints the table): a 3-member etcd
// cluster on loopback, two `orch apiserver` processes on it, concurrent
// writers recording a history of ConfigMap compare-and-set operations, and
// watchers that resume from their last resourceVersion (relisting on 410)
// and fail over between the API servers. A fault runs in the middle; then
// the writers stop, every key is read back, and the checkers run.

import { execFile } from "node:child_process";
import { request as httpsRequest, Agent } from "node:https";
import { performance } from "node:perf_hooks";
import { loadKubeconfig, type ClientConfig } from "../../src/client/kubeconfig.js";
import { startEtcdCluster, type EtcdCluster } from "../../src/storage/etcd/testing/etcd-server.js";
import { sleep } from "../../src/machinery/until.js";
import { startOrch, type OrchProcess } from "../support/orch-process.js";
import { CM_PATH, History, HistoryClient, httpJson, type Op } from "./history.js";
import { checkHistory, lostWrites } from "./linearizability.js";
import { checkWatchers, type WatchRecord } from "./history-watch.js";

export const LONG = process.env.FAULTS_LONG === "1";

export interface FaultReport {
  fault: string;
  writers: number;
  watchers: number;
  ops: number;
  acknowledged: number;
  lost: number;
  linearizable: boolean;
  inconclusiveKeys: number;
  watchViolations: number;
  /** Longest stretch without an acknowledged write, in seconds. */
  unavailableS: number;
  errors: Record<string, number>;
  details: string[];
}

export interface Workload {
  writers: number;
  keys: number;
  watchers: number;
}

/** What a fault may act on. */
export interface Target {
  etcd?: EtcdCluster;
  apiservers: (OrchProcess | undefined)[];
  /** Replace API server i (after a restart on another port): clients keep using the configs they have plus this one. */
  replaceServer(i: number, p: OrchProcess): void;
}

// --- watchers ---

const watchAgent = new Agent({ keepAlive: false, maxSockets: Infinity });

class Watcher {
  readonly record: WatchRecord[] = [];
  last = 0;
  #server: number;
  #stopped = false;
  #req: ReturnType<typeof httpsRequest> | undefined;
  constructor(
    readonly name: string,
    readonly servers: () => ClientConfig[],
    first: number,
  ) {
    this.#server = first;
  }

  async run(startRv: number): Promise<void> {
    this.last = startRv;
    while (!this.#stopped) {
      const servers = this.servers();
      const config = servers[this.#server % servers.length]!;
      this.record.push({ kind: "connect", fromRv: this.last, server: config.server });
      const result = await this.#stream(config);
      if (this.#stopped) break;
      if (result === "gone") {
        this.record.push({ kind: "gone" });
        // Relist (from any server that answers) and resume from the list's rv.
        for (;;) {
          if (this.#stopped) return;
          try {
            const r = await httpJson(this.servers()[this.#server % this.servers().length]!, "GET", CM_PATH("default"), undefined, 5000);
            if (r.status === 200) {
              this.last = Number(r.json.metadata.resourceVersion);
              this.record.push({ kind: "relist", rv: this.last });
              break;
            }
          } catch {
            // try the next server
          }
          this.#server++;
          await sleep(200);
        }
      } else {
        this.#server++; // connection lost: fail over
        await sleep(100);
      }
    }
  }

  #stream(config: ClientConfig): Promise<"gone" | "closed"> {
    return new Promise((resolve) => {
      const path = `${CM_PATH("default")}?watch=1&allowWatchBookmarks=true&resourceVersion=${this.last}`;
      const req = httpsRequest(new URL(path, config.server), { agent: watchAgent, ca: config.ca, cert: config.cert, key: config.key, rejectUnauthorized: !config.insecureSkipTlsVerify, headers: { accept: "application/json", ...(config.token !== undefined ? { authorization: `Bearer ${config.token}` } : {}) } }, (res) => {
        if (res.statusCode === 410) {
          res.resume();
          return resolve("gone");
        }
        if (res.statusCode !== 200) {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => {
            this.record.push({ kind: "refused", status: res.statusCode ?? 0, body: body.slice(0, 200) });
            resolve("closed");
          });
          return;
        }
        let buf = "";
        let gone = false;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() === "") continue;
            const e = JSON.parse(line) as { type: string; object: any };
            if (e.type === "ERROR") {
              if (e.object?.code === 410) gone = true;
              req.destroy();
              continue;
            }
            const rv = Number(e.object?.metadata?.resourceVersion);
            if (e.type === "BOOKMARK") this.record.push({ kind: "bookmark", rv });
            else this.record.push({ kind: "event", type: e.type, key: e.object.metadata.name, rv });
            if (rv > this.last) this.last = rv;
          }
        });
        res.on("close", () => resolve(gone ? "gone" : "closed"));
        res.on("error", () => resolve(gone ? "gone" : "closed"));
      });
      this.#req = req;
      req.on("error", () => resolve("closed"));
      req.end();
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#req?.destroy();
  }
}

// --- the scenario ---

function configOf(p: OrchProcess): ClientConfig {
  return loadKubeconfig(p.kubeconfig);
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Runs `workload` against `servers`, applies `fault` once the load is going,
 * then stops the writers, reads every key back and checks the history.
 */
export async function runWorkload(name: string, target: Target, workload: Workload, fault: (t: Target) => Promise<void>, options: { settleMs?: number } = {}): Promise<FaultReport> {
  const configs: ClientConfig[] = target.apiservers.filter((p): p is OrchProcess => p !== undefined).map(configOf);
  const origReplace = target.replaceServer;
  target.replaceServer = (i, p) => {
    origReplace(i, p);
    configs.push(configOf(p));
  };
  const history = new History();
  const keys = Array.from({ length: workload.keys }, (_, i) => `${name}-k${i}`);

  // Watchers start from the current list's rv, spread over the servers.
  const list = await httpJson(configs[0]!, "GET", CM_PATH("default"));
  if (list.status !== 200) throw new Error(`list: ${list.status} ${JSON.stringify(list.json)}`);
  const startRv = Number(list.json.metadata.resourceVersion);
  const watchers = Array.from({ length: workload.watchers }, (_, i) => new Watcher(`w${i}`, () => configs, i));
  const watching = watchers.map((w) => w.run(startRv));

  let writing = true;
  const okTimes: number[] = [];
  const writer = async (i: number) => {
    // Each writer starts on its own server and moves on after a transport error.
    const client = new HistoryClient(`c${i}`, configs, history, "default", 5_000, i);
    let seq = 0;
    while (writing) {
      const key = keys[(i + seq) % keys.length]!;
      const value = `c${i}-${seq++}`;
      const got = await client.get(key);
      let r;
      if (got.status === "fail" && got.code === 404) r = await client.create(key, value);
      else if (got.status === "ok") r = await client.update(key, value, got.rv);
      else {
        await sleep(100);
        continue;
      }
      if (r.status === "ok") okTimes.push(performance.now());
      else if (r.status === "unknown") await sleep(100);
    }
  };
  const writing_ = Array.from({ length: workload.writers }, (_, i) => writer(i));
  const started = performance.now();
  await sleep(LONG ? 5000 : 2000);
  await fault(target);
  // Some load after the fault, then stop.
  await until("a write after the fault", async () => okTimes.length > 0 && okTimes[okTimes.length - 1]! > performance.now() - 500, 90_000);
  await sleep(options.settleMs ?? (LONG ? 5000 : 2000));
  writing = false;
  await Promise.all(writing_);
  const ended = performance.now();

  // Final reads (recorded too: a stale one fails the linearizability check).
  const reader = new HistoryClient("final", configs, history, "default", 5_000, configs.length - 1);
  const final = new Map<string, { value: string; rv: number } | undefined>();
  for (const key of keys) {
    for (let attempt = 0; ; attempt++) {
      const r = await reader.get(key);
      if (r.status === "ok") {
        final.set(key, { value: r.value!, rv: r.rv });
        break;
      }
      if (r.status === "fail" && r.code === 404) {
        final.set(key, undefined);
        break;
      }
      if (attempt > 50) throw new Error(`final read of ${key}: ${JSON.stringify(r)}`);
      await sleep(200);
    }
  }

  const acked = history.acknowledgedWrites().map((o) => ({ key: o.key, rv: (o.outcome as { rv: number }).rv }));
  const maxRv = Math.max(startRv, ...acked.map((a) => a.rv));
  // Let every watcher catch up with the last acknowledged write (or give up after 30 s).
  await until("watchers to catch up", async () => watchers.every((w) => w.last >= maxRv), 30_000).catch(() => undefined);
  for (const w of watchers) w.stop();
  await Promise.all(watching);

  const lin = checkHistory(history.ops);
  const lost = lostWrites(history.ops, final);
  const violations = checkWatchers(new Map(watchers.map((w) => [w.name, w.record])), acked);
  const behind = watchers.filter((w) => w.last < maxRv).length;
  const times = [started, ...okTimes.sort((a, b) => a - b), ended];
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!);
  const details = [
    ...lin.failures.map((f) => `not linearizable: ${f.key}: ${f.explanation}`),
    ...lost.map((o: Op) => `lost: ${o.key} rv ${(o.outcome as { rv: number }).rv}`),
    ...violations.slice(0, 20).map((v) => `watch ${v.watcher}: ${v.what}`),
    ...(behind > 0 ? [`${behind} watchers never caught up with rv ${maxRv} (e.g. ${watchers.find((w) => w.last < maxRv)!.name} at rv ${watchers.find((w) => w.last < maxRv)!.last}: ${JSON.stringify(watchers.find((w) => w.last < maxRv)!.record.slice(-3))})`] : []),
  ];
  return {
    fault: name,
    writers: workload.writers,
    watchers: workload.watchers,
    ops: history.ops.length,
    acknowledged: acked.length,
    lost: lost.length,
    linearizable: lin.linearizable,
    inconclusiveKeys: lin.inconclusive.length,
    watchViolations: violations.length + behind,
    unavailableS: Math.round(gap / 100) / 10,
    errors: history.errorsByKind(),
    details,
  };
}

/** A 3-member etcd cluster and two API servers on it. */
export async function startEtcdTarget(options: { uids?: number[] } = {}): Promise<Target & { stop(): Promise<void> }> {
  const etcd = await startEtcdCluster(3, { uids: options.uids });
  const args = ["--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`];
  const apiservers: (OrchProcess | undefined)[] = [];
  try {
    apiservers.push(await startOrch("apiserver", args));
    apiservers.push(await startOrch("apiserver", args));
  } catch (err) {
    for (const p of apiservers) await p?.stop("SIGKILL");
    await etcd.stop();
    throw err;
  }
  const target = {
    etcd,
    apiservers,
    replaceServer(i: number, p: OrchProcess) {
      apiservers[i] = p;
    },
    async stop() {
      for (const p of target.apiservers) await p?.stop("SIGKILL").catch(() => undefined);
      await etcd.stop();
    },
  };
  return target;
}

export const ETCD_ARGS = (etcd: EtcdCluster) => ["--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`];

export const WRITERS = 200;

/** The faults, by name. Each takes the target and returns once the fault is over (healed). */
export const FAULTS: Record<string, { workload: Workload; fault: (t: Target) => Promise<void> }> = {
  ...(process.env.FAULTS_DEBUG === "1" ? { "no fault": { workload: { writers: 4, keys: 2, watchers: 2 }, fault: async () => undefined } } : {}),
  "kill -9 etcd leader": {
    workload: { writers: WRITERS, keys: 50, watchers: 20 },
    async fault(t) {
      const leader = await t.etcd!.leader();
      await leader.kill("SIGKILL");
      await sleep(3000);
      await leader.restart();
    },
  },
  "kill -9 API server (500 watches)": {
    workload: { writers: 50, keys: 25, watchers: 500 },
    async fault(t) {
      await t.apiservers[0]!.stop("SIGKILL");
      t.apiservers[0] = undefined;
    },
  },
  "SIGSTOP etcd leader 20 s": {
    workload: { writers: 50, keys: 25, watchers: 20 },
    async fault(t) {
      const leader = await t.etcd!.leader();
      leader.signal("SIGSTOP");
      await sleep(20_000);
      leader.signal("SIGCONT");
    },
  },
  "partition the etcd leader 10 s, then heal": {
    workload: { writers: 50, keys: 25, watchers: 20 },
    async fault(t) {
      const leader = await t.etcd!.leader();
      await partition(t, t.etcd!.members.indexOf(leader), () => sleep(10_000));
    },
  },
  "restart the whole etcd cluster": {
    workload: { writers: 50, keys: 25, watchers: 20 },
    async fault(t) {
      const members = t.etcd!.members;
      await Promise.all(members.map((m) => m.kill("SIGKILL")));
      await sleep(1000);
      await Promise.all(members.map((m) => m.restart()));
    },
  },
};

/**
 * Partitions member `i` from its peers with iptables: nothing reaches its peer
 * port, and nothing its process (alone under PARTITION_UIDS[i]) sends reaches
 * the others' peer ports; its client port stays open, as a minority member's
 * would. A port rule alone would not do on loopback: the member's own
 * connections to its peers come from ephemeral ports like everyone else's.
 */
export const PARTITION_UIDS = [64_501, 64_502, 64_503];
function iptables(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile("iptables", ["-w", ...args], (err, _o, stderr) => (err ? reject(new Error(`iptables ${args.join(" ")}: ${stderr}`)) : resolve())));
}
async function partition(t: Target, i: number, heal: () => Promise<void>): Promise<void> {
  const members = t.etcd!.members;
  const self = members[i]!;
  const others = members.filter((m) => m !== self).map((m) => m.peerPort);
  const rules = [
    ["INPUT", "-p", "tcp", "--dport", String(self.peerPort), "-j", "DROP"],
    ["OUTPUT", "-m", "owner", "--uid-owner", String(PARTITION_UIDS[i]), "-p", "tcp", "-m", "multiport", "--dports", others.join(","), "-j", "DROP"],
  ];
  for (const r of rules) await iptables(["-I", ...r]);
  try {
    await heal();
  } finally {
    for (const r of rules) await iptables(["-D", ...r]).catch(() => undefined);
  }
}

export function partitionSkipReason(): string | false {
  if (process.getuid?.() !== 0) return "partitioning a member needs root (iptables, members under their own uids)";
  return false;
}

/** Runs one etcd fault on a fresh cluster. */
export async function runEtcdFault(name: string): Promise<FaultReport> {
  const f = FAULTS[name]!;
  const target = await startEtcdTarget(name.startsWith("partition") ? { uids: PARTITION_UIDS } : {});
  try {
    const r = await runWorkload(name.replace(/[^a-z0-9]+/gi, "-").toLowerCase().replace(/^-|-$/g, ""), target, f.workload, f.fault);
    return { ...r, fault: name };
  } finally {
    await target.stop();
  }
}

/** The embedded lmdb store under kill -9 of `orch server`: acknowledged writes before the kill are all there after the restart. */
export async function runLmdbKill(): Promise<FaultReport> {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dataDir = mkdtempSync(join(tmpdir(), "orch-faults-lmdb-"));
  let server: OrchProcess | undefined = await startOrch("apiserver", [], { dataDir });
  try {
    const target: Target = {
      apiservers: [server],
      replaceServer(_i, p) {
        server = p;
      },
    };
    return await runWorkload("lmdb-kill", target, { writers: 50, keys: 25, watchers: 0 }, async (t) => {
      await server!.stop("SIGKILL");
      t.replaceServer(0, await startOrch("apiserver", [], { dataDir }));
    });
  } finally {
    await server?.stop("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A one-line summary of a report for assertion messages. */
export function summary(r: FaultReport): string {
  return `${r.fault}: ${r.acknowledged} acked, ${r.lost} lost, linearizable ${r.linearizable}, ${r.watchViolations} watch violations, ${r.unavailableS} s unavailable, errors ${JSON.stringify(r.errors)}\n${r.details.join("\n")}`;
}
