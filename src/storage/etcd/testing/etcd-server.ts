// Real etcd processes for tests and benchmarks: one member or a cluster on
// loopback, on ports picked at run time, with data in temporary folders that
// are removed on stop (and on process exit, should a test forget).
// etcdSkipReason()/etcdAvailableOrSkip() hold the policy for a missing binary:
// skip with a printed reason locally, fail when CI=true.

import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, chownSync, constants, mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { TestContext } from "node:test";
import { sleep } from "../../../machinery/until.js";

/** Where the etcd binary is: $ETCD_BIN, else the first `etcd` on PATH (Debian: /usr/bin/etcd). */
export function etcdBinary(): string | undefined {
  const candidates = [
    process.env.ETCD_BIN,
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => (dir === "" ? undefined : join(dir, "etcd"))),
    "/usr/bin/etcd",
  ];
  for (const path of candidates) {
    if (path === undefined || path === "") continue;
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Why etcd tests cannot run here, or undefined when they can. Under CI=true a
 * missing binary throws instead: CI must never pass by skipping etcd tests.
 * Use as `describe(name, { skip: etcdSkipReason() ?? false }, ...)`.
 */
export function etcdSkipReason(): string | undefined {
  if (etcdBinary() !== undefined) return undefined;
  const reason = "etcd binary not found (install Debian's etcd-server, or set ETCD_BIN)";
  if (process.env.CI === "true") throw new Error(`${reason}; CI=true, so etcd tests fail instead of skipping`);
  console.log(`# skipping etcd tests: ${reason}`);
  return reason;
}

/** For use inside a test: skips it (with the reason printed) when etcd is missing; fails under CI. */
export function etcdAvailableOrSkip(t: TestContext): boolean {
  const reason = etcdSkipReason();
  if (reason === undefined) return true;
  t.skip(reason);
  return false;
}

export interface StartEtcdOptions {
  /** Folder for the data folder (default: the OS temp folder). */
  dataParent?: string;
  /** Extra etcd flags, e.g. ["--experimental-watch-progress-notify-interval=1s"]. */
  extraArgs?: string[];
  /** How long to wait for the member(s) to serve (default 20 s). */
  readyTimeoutMs?: number;
  /** Run member i under uid `uids[i]` (root only), so iptables `-m owner` can single out its traffic. */
  uids?: number[];
}

export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  /** Whether the process is running. */
  running(): boolean;
  /** Send a signal (default SIGKILL) and wait for the process to exit; the data stays. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start again with the same name, ports and data, and wait until it serves. */
  restart(): Promise<void>;
  /** Whether this member is the raft leader (from its /metrics). */
  isLeader(): Promise<boolean>;
  /** Send a signal without waiting for an exit (SIGSTOP/SIGCONT); false when not running. */
  signal(signal: NodeJS.Signals): boolean;
  /** The port peers reach this member on (for partition tests). */
  readonly peerPort: number;
  /** The last lines etcd logged, for failure messages. */
  logs(): string;
}

export interface EtcdServer {
  /** Client URLs, ready for openEtcdStorage({ endpoints }). */
  readonly endpoints: string[];
  readonly member: EtcdMember;
  kill(signal?: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
  /** Stop the process and remove its data. */
  stop(): Promise<void>;
}

export interface EtcdCluster {
  readonly endpoints: string[];
  readonly members: EtcdMember[];
  /** The current leader; waits (up to 10 s) while there is none. */
  leader(): Promise<EtcdMember>;
  /** Stop every member and remove their data. */
  stop(): Promise<void>;
}

/** One etcd member on loopback. */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdServer> {
  const [member] = await startMembers(1, options);
  const m = member!;
  return {
    endpoints: [m.clientUrl],
    member: m,
    kill: (signal) => m.kill(signal),
    restart: () => m.restart(),
    stop: () => m.destroy(),
  };
}

/** A cluster of `size` members on loopback (--initial-cluster-state new). */
export async function startEtcdCluster(size = 3, options: StartEtcdOptions = {}): Promise<EtcdCluster> {
  const members = await startMembers(size, options);
  return {
    endpoints: members.map((m) => m.clientUrl),
    members,
    async leader() {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        for (const m of members) {
          if (m.running() && (await m.isLeader().catch(() => false))) return m;
        }
        await sleep(50);
      }
      throw new Error("etcd cluster has no leader after 10 s");
    },
    async stop() {
      await Promise.all(members.map((m) => m.destroy()));
    },
  };
}

// --- implementation ---

const live = new Set<Member>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test that throws before stop() must not leave etcd processes or folders behind.
  process.on("exit", () => {
    for (const m of live) m.destroySync();
  });
  // A signal ends the process without "exit" handlers; clean up, then die of the same signal.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      for (const m of live) m.destroySync();
      process.kill(process.pid, signal);
    });
  }
}

async function startMembers(size: number, options: StartEtcdOptions): Promise<Member[]> {
  const binary = etcdBinary();
  if (binary === undefined) throw new Error("etcd binary not found (install Debian's etcd-server, or set ETCD_BIN)");
  installExitHook();
  // Ports are probed free, then handed to etcd; another process may grab one
  // in between, so a start that fails to bind is retried on new ports.
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(size * 2);
    const token = `orch-test-${process.pid}-${Date.now()}-${attempt}`;
    const names = Array.from({ length: size }, (_, i) => `m${i}`);
    const peerUrl = (i: number) => `http://127.0.0.1:${ports[2 * i + 1]}`;
    const initialCluster = names.map((n, i) => `${n}=${peerUrl(i)}`).join(",");
    const members = names.map(
      (name, i) =>
        new Member({
          binary,
          name,
          clientUrl: `http://127.0.0.1:${ports[2 * i]}`,
          peerUrl: peerUrl(i),
          initialCluster,
          token,
          dataParent: options.dataParent ?? tmpdir(),
          extraArgs: options.extraArgs ?? [],
          readyTimeoutMs: options.readyTimeoutMs ?? 20_000,
          uid: options.uids?.[i],
        }),
    );
    try {
      await Promise.all(members.map((m) => m.start()));
      return members;
    } catch (err) {
      await Promise.all(members.map((m) => m.destroy()));
      const portClash = members.some((m) => /address already in use/.test(m.logs()));
      if (!portClash || attempt >= 3) throw err;
    }
  }
}

interface MemberConfig {
  binary: string;
  name: string;
  clientUrl: string;
  peerUrl: string;
  initialCluster: string;
  token: string;
  dataParent: string;
  extraArgs: string[];
  readyTimeoutMs: number;
  uid?: number;
}

class Member implements EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  readonly #config: MemberConfig;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #log: string[] = [];

  constructor(config: MemberConfig) {
    this.#config = config;
    this.name = config.name;
    this.clientUrl = config.clientUrl;
    this.peerUrl = config.peerUrl;
    this.dataDir = mkdtempSync(join(config.dataParent, `orch-etcd-${config.name}-`));
    if (config.uid !== undefined) chownSync(this.dataDir, config.uid, config.uid);
  }

  running(): boolean {
    return this.#child !== undefined;
  }

  logs(): string {
    return this.#log.join("");
  }

  async start(): Promise<void> {
    if (this.#child !== undefined) return;
    const c = this.#config;
    const child = spawn(
      c.binary,
      [
        `--name=${c.name}`,
        `--data-dir=${this.dataDir}`,
        `--listen-client-urls=${c.clientUrl}`,
        `--advertise-client-urls=${c.clientUrl}`,
        `--listen-peer-urls=${c.peerUrl}`,
        `--initial-advertise-peer-urls=${c.peerUrl}`,
        `--initial-cluster=${c.initialCluster}`,
        "--initial-cluster-state=new",
        `--initial-cluster-token=${c.token}`,
        // Shorter raft timings than the defaults (100/1000 ms): a leader kill costs about 1 s, not 2.
        "--heartbeat-interval=50",
        "--election-timeout=500",
        // Room for a value of MAX_VALUE_BYTES plus key and framing: the limit is ours to enforce.
        "--max-request-bytes=2097152",
        "--logger=zap",
        "--log-outputs=stderr",
        "--log-level=warn",
        ...c.extraArgs,
      ],
      { stdio: ["ignore", "ignore", "pipe"], ...(c.uid !== undefined ? { uid: c.uid, gid: c.uid } : {}) },
    );
    this.#child = child;
    live.add(this);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.#log.push(chunk);
      if (this.#log.length > 200) this.#log.splice(0, this.#log.length - 200);
    });
    this.#exited = new Promise<void>((resolve) => {
      child.once("exit", () => {
        if (this.#child === child) this.#child = undefined;
        resolve();
      });
    });
    await this.#waitReady(child);
  }

  restart(): Promise<void> {
    return this.start();
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill(signal);
    await this.#exited;
  }

  get peerPort(): number {
    return Number(new URL(this.peerUrl).port);
  }

  signal(signal: NodeJS.Signals): boolean {
    return this.#child?.kill(signal) ?? false;
  }

  async isLeader(): Promise<boolean> {
    const res = await fetch(`${this.clientUrl}/metrics`, { signal: AbortSignal.timeout(2000) });
    return /^etcd_server_is_leader 1$/m.test(await res.text());
  }

  async destroy(): Promise<void> {
    const child = this.#child;
    if (child !== undefined) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await this.#exited;
      clearTimeout(timer);
    }
    live.delete(this);
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  destroySync(): void {
    this.#child?.kill("SIGKILL");
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Ready = /health says true (a leader exists and a read went through). */
  async #waitReady(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + this.#config.readyTimeoutMs;
    let exited = false;
    void this.#exited.then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited || this.#child !== child) {
        throw new Error(`etcd ${this.name} exited during start-up:\n${this.logs()}`);
      }
      try {
        const res = await fetch(`${this.clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
        const body = (await res.json()) as { health?: string };
        if (body.health === "true") return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    throw new Error(`etcd ${this.name} not ready after ${this.#config.readyTimeoutMs} ms:\n${this.logs()}`);
  }
}

/** `count` distinct free TCP ports on 127.0.0.1 (all held open at once, then released). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

