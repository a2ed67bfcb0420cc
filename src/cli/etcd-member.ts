// The local etcd member of an HA `orch server` (--cluster-init, or
// --join --control-plane): etcd (Debian's etcd-server binary) as a child
// process with its data under DATA_DIR/etcd, client and peer TLS from the
// cluster CA (client certificates required on both), restarted when it dies
// and stopped with the server. `setpriv --pdeathsig KILL` ties it to this
// process, so a server killed with -9 takes its member down with it (as a
// machine that fails would); a member left over from an earlier run anyway
// is found by its pid file and stopped before the new one starts.

import { spawn, type ChildProcess } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import { PKI_FILES, signCertificate } from "../component/pki.js";
import { EtcdCluster, type EtcdTls } from "../storage/etcd/index.js";
import { sleep } from "../machinery/until.js";

/** What a member keeps across restarts in DATA_DIR/etcd/member.json: its name and URLs are registered in the cluster. */
export interface MemberConfig {
  name: string;
  clientUrl: string;
  peerUrl: string;
  clientPort: number;
  peerPort: number;
  /** The --initial-cluster and --initial-cluster-state of its first start (ignored by etcd once it has data). */
  initialCluster: string;
  initialClusterState: "new" | "existing";
}

export interface EtcdPaths {
  dir: string;
  data: string;
  config: string;
  pidFile: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  ca: string;
}

export function etcdPaths(dataDir: string): EtcdPaths {
  const dir = join(dataDir, "etcd");
  return {
    dir,
    data: join(dir, "data"),
    config: join(dir, "member.json"),
    pidFile: join(dir, "etcd.pid"),
    serverCert: join(dir, "pki", "server.crt"),
    serverKey: join(dir, "pki", "server.key"),
    clientCert: join(dir, "pki", "client.crt"),
    clientKey: join(dir, "pki", "client.key"),
    ca: join(dataDir, PKI_FILES.caCert),
  };
}

/** The TLS material the API server and the admin commands use towards the members. */
export function etcdClientTls(paths: EtcdPaths): Required<EtcdTls> {
  return { ca: readFileSync(paths.ca, "utf8"), cert: readFileSync(paths.clientCert, "utf8"), key: readFileSync(paths.clientKey, "utf8") };
}

/** Where the etcd binary is: $ETCD_BIN, else /usr/bin/etcd, else `etcd` on PATH. */
export function etcdBinary(): string {
  for (const path of [process.env.ETCD_BIN, "/usr/bin/etcd", "/usr/local/bin/etcd"]) {
    if (path === undefined || path === "") continue;
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  throw new Error("etcd not found: install Debian's etcd-server package (/usr/bin/etcd) or set ETCD_BIN");
}

/** A saved member configuration, or undefined for a data folder that never ran one. */
export function loadMemberConfig(paths: EtcdPaths): MemberConfig | undefined {
  if (!existsSync(paths.config)) return undefined;
  return JSON.parse(readFileSync(paths.config, "utf8")) as MemberConfig;
}

export function saveMemberConfig(paths: EtcdPaths, config: MemberConfig): void {
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeFileSync(paths.config, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
}

/** Whether etcd has data here already (then it starts from it and ignores the --initial-cluster flags). */
export function hasMemberData(paths: EtcdPaths): boolean {
  return existsSync(join(paths.data, "member"));
}

/**
 * Port `wanted` on all addresses if free; when it is taken and was a default
 * (not given on the command line), a free one instead and `log` says so.
 */
export async function pickPort(wanted: number, given: boolean, what: string, log: (line: string) => void): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(port, "0.0.0.0", () => {
        const got = (server.address() as { port: number }).port;
        server.close(() => resolve(got));
      });
    });
  try {
    return await tryListen(wanted);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || given || wanted === 0) throw new Error(`${what} port ${wanted}: ${(err as Error).message}`);
    const port = await tryListen(0);
    log(`etcd: ${what} port ${wanted} is in use (another orch server on this host?): using ${port} instead`);
    return port;
  }
}

/**
 * The member's serving certificate (used for both client and peer
 * connections, so it is valid for server and client auth) and the client
 * certificate of this server's API server, issued from the cluster CA once.
 */
export async function ensureEtcdCertificates(paths: EtcdPaths, caKeyFile: string, names: { dns: string[]; ips: string[] }): Promise<void> {
  mkdirSync(join(paths.dir, "pki"), { recursive: true, mode: 0o700 });
  const ca = { cert: readFileSync(paths.ca, "utf8"), key: readFileSync(caKeyFile, "utf8") };
  const issue = async (certFile: string, keyFile: string, commonName: string, usages: string[], san: { dns: string[]; ips: string[] }) => {
    if (existsSync(certFile) && existsSync(keyFile)) return;
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const notBefore = new Date(Date.now() - 60_000);
    const cert = await signCertificate(ca, {
      publicKeyDer: publicKey.export({ type: "spki", format: "der" }),
      commonName,
      organizations: [],
      dnsNames: san.dns,
      ipAddresses: san.ips,
      usages,
      notBefore,
      notAfter: new Date(notBefore.getTime() + 10 * 365 * 24 * 3600_000),
    });
    writeFileSync(keyFile, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(certFile, cert, { mode: 0o644 });
  };
  const dns = [...new Set(["localhost", hostname(), ...names.dns])];
  const ips = [...new Set(["127.0.0.1", "::1", ...names.ips])];
  await issue(paths.serverCert, paths.serverKey, `orch-etcd-${hostname()}`, ["digital signature", "key encipherment", "server auth", "client auth"], { dns, ips });
  await issue(paths.clientCert, paths.clientKey, "orch-apiserver-etcd-client", ["digital signature", "key encipherment", "client auth"], { dns: [], ips: [] });
}

export interface LocalEtcdOptions {
  paths: EtcdPaths;
  member: MemberConfig;
  /** For the first start of a new member: `name=peerURL,...` of every member, and whether the cluster is new or existing. */
  initialCluster: string;
  initialClusterState: "new" | "existing";
  log: (line: string) => void;
  /** How long a start may take before it counts as failed (default: no limit; a line every 30 s). */
  readyTimeoutMs?: number;
}

/** A supervised local etcd member. */
export class LocalEtcd {
  readonly #options: LocalEtcdOptions;
  readonly #binary: string;
  #child: ChildProcess | undefined;
  #stopping = false;
  #restarts = 0;
  #tail: string[] = [];
  #exited: Promise<void> = Promise.resolve();

  constructor(options: LocalEtcdOptions) {
    this.#options = options;
    this.#binary = etcdBinary();
  }

  get clientUrl(): string {
    return this.#options.member.clientUrl;
  }

  /** How many times the supervisor restarted the member after it died. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The process id of the running member (undefined between a death and its restart). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the member and resolves once it answers with a leader elected. */
  async start(): Promise<void> {
    await stopStale(this.#options.paths, this.#options.log);
    this.#spawn();
    await this.#untilReady();
  }

  /** SIGTERM, then SIGKILL after 10 s; no restart follows. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const child = this.#child;
    if (child === undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await this.#exited;
    clearTimeout(timer);
  }

  #args(): string[] {
    const { paths, member } = this.#options;
    const tls = (prefix: string) => [`--${prefix}cert-file=${paths.serverCert}`, `--${prefix}key-file=${paths.serverKey}`, `--${prefix}trusted-ca-file=${paths.ca}`, `--${prefix}client-cert-auth`];
    return [
      `--name=${member.name}`,
      `--data-dir=${paths.data}`,
      // Listen where the member is advertised (the node's address), and on loopback for this server's own API server.
      `--listen-client-urls=${listenUrls(member.clientUrl)}`,
      `--advertise-client-urls=${member.clientUrl}`,
      `--listen-peer-urls=${new URL(member.peerUrl).origin}`,
      `--initial-advertise-peer-urls=${member.peerUrl}`,
      `--initial-cluster=${this.#options.initialCluster}`,
      `--initial-cluster-state=${this.#options.initialClusterState}`,
      "--initial-cluster-token=orch-etcd-cluster",
      ...tls(""),
      ...tls("peer-"),
      // Faster elections than the defaults (100/1000 ms): losing the leader costs about a second.
      "--heartbeat-interval=100",
      "--election-timeout=1000",
      // Room for the largest value the API server writes, plus framing.
      "--max-request-bytes=2097152",
      "--logger=zap",
      "--log-outputs=stderr",
      "--log-level=warn",
    ];
  }

  #spawn(): void {
    const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));
    const [command, args] = setpriv === undefined ? [this.#binary, this.#args()] : [setpriv, ["--pdeathsig", "KILL", this.#binary, ...this.#args()]];
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    this.#child = child;
    if (child.pid !== undefined) writeFileSync(this.#options.paths.pidFile, `${child.pid}\n`, { mode: 0o600 });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.#tail.push(chunk);
      if (this.#tail.length > 50) this.#tail.splice(0, this.#tail.length - 50);
    });
    this.#exited = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        if (this.#child === child) this.#child = undefined;
        resolve();
        if (this.#stopping) return;
        this.#options.log(`etcd: member ${this.#options.member.name} exited (${signal ?? `code ${code}`}); restarting it in 1 s${this.#lastLines()}`);
        void sleep(1000).then(() => {
          if (this.#stopping || this.#child !== undefined) return;
          this.#restarts++;
          this.#spawn();
        });
      });
    });
  }

  #lastLines(): string {
    const text = this.#tail.join("").trim().split("\n").slice(-3).join("\n");
    return text === "" ? "" : `:\n${text}`;
  }

  /**
   * Until the member answers with a leader. A member of a cluster whose other
   * members are all down waits for them (a whole-cluster restart): it says so
   * every 30 s and keeps waiting unless `readyTimeoutMs` was given.
   */
  async #untilReady(): Promise<void> {
    const started = Date.now();
    const timeout = this.#options.readyTimeoutMs;
    let nextNote = started + 30_000;
    const cluster = new EtcdCluster({ endpoints: [this.clientUrl], tls: etcdClientTls(this.#options.paths), requestTimeoutMs: 2000 });
    try {
      while (timeout === undefined || Date.now() < started + timeout) {
        if (this.#stopping) throw new Error("etcd: stopped during start-up");
        if (await cluster.status().then(() => true, () => false)) return;
        if (Date.now() >= nextNote) {
          nextNote += 30_000;
          this.#options.log(`etcd: member ${this.#options.member.name} has no leader yet after ${Math.round((Date.now() - started) / 1000)} s: waiting for a quorum of the members (are the other servers of the control plane running?)${this.#lastLines()}`);
        }
        await sleep(200);
      }
    } finally {
      cluster.close();
    }
    throw new Error(`etcd: member ${this.#options.member.name} not ready after ${timeout! / 1000} s${this.#lastLines()}`);
  }
}

/** Stops an etcd left running from an earlier run of this data folder (its pid file names it, its command line names our data). */
async function stopStale(paths: EtcdPaths, log: (line: string) => void): Promise<void> {
  if (!existsSync(paths.pidFile)) return;
  const pid = Number(readFileSync(paths.pidFile, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline = "";
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return; // gone
  }
  if (!cmdline.includes(`--data-dir=${paths.data}`)) return;
  log(`etcd: stopping the member left running by an earlier orch server (pid ${pid})`);
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await sleep(50);
}

/** The advertised URL, plus loopback when the advertised host is not loopback. */
function listenUrls(advertised: string): string {
  const url = new URL(advertised);
  const loopback = url.hostname === "127.0.0.1" || url.hostname === "[::1]" || url.hostname === "localhost";
  return loopback ? url.origin : `${url.origin},https://127.0.0.1:${url.port}`;
}
