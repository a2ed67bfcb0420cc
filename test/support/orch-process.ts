// Runs the real `orch` command (bin/orch.js) as a child process for
// end-to-end tests: a fresh data folder, a port picked at run time, and the
// ready line parsed for the URL. Stopped with SIGTERM (then SIGKILL).
// startComponent does the same for the components other than the API server,
// reading the line the component base logs when it serves. Node agents started
// here stop their pods' containers on exit (--stop-pods-on-exit), so a test
// leaves no container processes behind, unless it asks to keep them.

import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, type WriteStream } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));

export interface OrchProcess {
  url: string;
  pid: number;
  dataDir: string;
  kubeconfig: string;
  output(): string;
  /** Sends `signal` (default SIGTERM; SIGKILL after 10 s) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface ComponentProcess {
  readonly url: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns `orch <args>` and resolves once its output matches `ready` (group 1: the URL). */
async function spawnUntilReady(args: string[], ready: RegExp, timeoutMs: number): Promise<ComponentProcess & { child: ChildProcess; exited: Promise<void> }> {
  // ORCH_NODE_ARGS passes node flags to the child (e.g. --cpu-prof when profiling a benchmark).
  const nodeArgs = (process.env["ORCH_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "");
  // The suites' pods run images (busybox, nginx) nobody imported, on the embedded runtime's host-root fallback:
  // the suites' agents allow it for every pod unless a test chooses (the commands' default, "marked", is tested on its own).
  if ((args[0] === "server" || args[0] === "nodeagent") && !args.some((a) => a.startsWith("--host-root-fallback"))) args = [...args, "--host-root-fallback=any"];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const file = benchLogFile(`orch-${args[0]}-${child.pid}.log`);
  if (file !== undefined) {
    child.stdout!.pipe(file, { end: false });
    child.stderr!.pipe(file, { end: false });
  }
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not ready is not done: a server left running keeps its ports, its data folder and (orch server) its
      // iptables chains, which a later server with the same chain prefix would fight over.
      child.kill("SIGKILL");
      reject(new Error(`orch ${args[0]} not ready after ${timeoutMs} ms (killed):\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`orch ${args[0]} exited with ${code}:\n${output}`));
    });
  });
  const exited = new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r())));
  return {
    child,
    url,
    exited,
    output: () => output,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The node agent of `orch server` on a free loopback port, its Node advertising 127.0.0.1 so the API
 * server reaches it there (the defaults, port 10250 on every address, would collide between suites).
 */
export const AGENT_PORT_ARGS = ["--nodeagent-port=0", "--nodeagent-bind-address=127.0.0.1", "--node-ip=127.0.0.1"];
/** `orch server`'s other component ports (controller manager, scheduler) on free ports too. */
const SERVER_PORT_ARGS = [...AGENT_PORT_ARGS, "--controller-manager-port=0", "--scheduler-port=0"];

/**
 * Servers started by tests run no service proxy unless the test asks for one
 * (with its own --iptables-chain-prefix): proxies of concurrent tests would
 * rewrite each other's iptables chains.
 */
function withoutProxy(subcommand: string, args: string[]): string[] {
  if (subcommand !== "server" || args.some((a) => a.startsWith("--disable-proxy") || a.startsWith("--iptables-chain-prefix"))) return args;
  return [...args, "--disable-proxy"];
}

/** This host's first non-loopback IPv4 address outside the pod bridge (10.89.0.0/16), if it has one. */
export function hostIPv4(): string | undefined {
  return Object.values(networkInterfaces()).flat().find((a) => a?.family === "IPv4" && !a.internal && !a.address.startsWith("10.89."))?.address;
}

export interface StartOrchOptions {
  /** An existing data folder (kept at stop); default a fresh one, removed at stop. */
  dataDir?: string;
  readyTimeoutMs?: number;
  /** `orch server`: leave the pods running when it stops (default false: --stop-pods-on-exit). */
  keepPods?: boolean;
  /** `orch server`: its parts on their default ports (default false: free ones, so suites never collide). */
  defaultPorts?: boolean;
}

export async function startOrch(subcommand: string, args: string[] = [], options: StartOrchOptions = {}): Promise<OrchProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `orch-e2e-${subcommand}-`));
  const portArgs = subcommand === "server" && !options.defaultPorts ? SERVER_PORT_ARGS : [];
  const stopPods = subcommand === "server" && !options.keepPods ? ["--stop-pods-on-exit"] : [];
  const p = await spawnUntilReady([subcommand, "--data-dir", dataDir, "--secure-port", "0", ...portArgs, ...stopPods, ...withoutProxy(subcommand, args)], /ready: serving (https:\/\/\S+)/, options.readyTimeoutMs ?? 60_000);
  return {
    url: p.url,
    pid: p.child.pid!,
    dataDir,
    kubeconfig: join(dataDir, "admin.kubeconfig"),
    output: p.output,
    async stop(signal) {
      await p.stop(signal);
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}

/** `orch controller-manager|proxy|cloud-controller-manager|...` with `args` (give it a port of 0); `exited` settles with its exit code. */
export async function startComponent(subcommand: string, args: string[], options: { readyTimeoutMs?: number } = {}): Promise<ComponentProcess & { exited: Promise<number | null> }> {
  const p = await spawnUntilReady([subcommand, ...args], /: serving \/healthz.* on (https:\/\/\S+)/, options.readyTimeoutMs ?? 60_000);
  return { url: p.url, output: p.output, stop: p.stop, exited: p.exited.then(() => p.child.exitCode) };
}

export interface JoinedAgentProcess extends ComponentProcess {
  readonly pid: number;
  /** Its --data-dir (removed when it stops). */
  readonly dataDir: string;
  /** SIGKILL, as a crashed machine would: no clean shutdown, no last status. */
  kill(): Promise<void>;
}

/**
 * `orch server JOIN --node-name NAME`, where JOIN is `--kubeconfig FILE` or `--join URL --token T
 * --certificate-authority CA`: only a node agent, joining an existing cluster; resolves once its node is Ready.
 */
export async function startJoinedAgent(
  join_: string[],
  nodeName: string,
  options: {
    readyTimeoutMs?: number;
    /** An existing data folder (kept at stop; e.g. with images imported into its runtime); default a fresh one, removed at stop. */
    dataDir?: string;
    /** Its port and address flags instead of AGENT_PORT_ARGS (a free loopback port, node IP 127.0.0.1). */
    agentArgs?: string[];
  } = {},
): Promise<JoinedAgentProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `orch-e2e-agent-${nodeName}-`));
  const p = await spawnUntilReady(
    ["server", ...withoutProxy("server", join_), "--node-name", nodeName, "--data-dir", dataDir, ...(options.agentArgs ?? AGENT_PORT_ARGS), "--stop-pods-on-exit"],
    /ready: node \S+ joined (https:\/\/\S+)/,
    options.readyTimeoutMs ?? 60_000,
  );
  const cleanup = () => options.dataDir === undefined && rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 });
  return {
    url: p.url,
    pid: p.child.pid!,
    dataDir,
    output: p.output,
    async stop() {
      await p.stop();
      cleanup();
    },
    async kill() {
      p.child.kill("SIGKILL");
      await p.exited;
      cleanup();
    },
  };
}

/** BENCH_LOG_DIR (benchmarks): a file there for one child's whole output, for diagnosis (the folder is made when missing). */
export function benchLogFile(name: string): WriteStream | undefined {
  const logDir = process.env["BENCH_LOG_DIR"];
  if (logDir === undefined) return undefined;
  mkdirSync(logDir, { recursive: true });
  return createWriteStream(join(logDir, name));
}
