// Starts a private containerd (Debian 1.6) for a test: root, state, sockets,
// runc root and CNI configuration under one temporary folder, with the two
// settings these VMs need (REAL-COMPONENTS.md): restrict_oom_score_adj and a
// locally imported sandbox image. Images come from buildBusyboxImage and
// `ctr -n k8s.io images import`, or from a loopback registry named in the
// hosts.toml files under `registryConfigPath`.

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CriClient } from "../../src/nodeagent/cri/index.js";
import { buildBusyboxImage, busyboxSkipReason } from "./busybox-image.js";
import { skipOrFailInCi } from "./skip.js";

const run = promisify(execFile);
export const SANDBOX_IMAGE = "orch.local/pause:1";
export const BUSYBOX_IMAGE = "docker.io/library/busybox:latest";
const CNI_BIN = "/usr/lib/cni";

/** Why containerd tests cannot run here, or undefined; with CI=true a missing piece is an error. */
export function containerdSkipReason(): string | undefined {
  let reason: string | undefined;
  if (process.getuid?.() !== 0) reason = "containerd needs root";
  else if (!["containerd", "ctr", "runc"].every((b) => existsSync(`/usr/bin/${b}`) || existsSync(`/usr/sbin/${b}`))) reason = "containerd, ctr or runc not installed (apt-get install containerd runc)";
  else return busyboxSkipReason();
  return skipOrFailInCi(reason);
}

export interface Containerd {
  readonly dir: string;
  /** `unix:///…/containerd.sock`. */
  readonly endpoint: string;
  readonly client: CriClient;
  /** Runs `ctr -n k8s.io` against this containerd. */
  ctr(...args: string[]): Promise<string>;
  /** Imports an image tarball (docker save or OCI) into the k8s.io namespace. */
  importImage(file: string): Promise<void>;
  /** Directory of a bridge + host-local CNI network, when one was configured. */
  readonly cni: boolean;
  /** Removes every pod, stops containerd and deletes the folder. */
  stop(): Promise<void>;
  /** Stops containerd (SIGTERM: pods keep running under their shims) and starts it again on the same socket and state; resolves once CRI answers. */
  restart(): Promise<void>;
}

export interface StartContainerdOptions {
  /** Configure a bridge + host-local CNI network so pods get their own IPs (default true). */
  cni?: boolean;
  /** containerd's registry config_path (hosts.toml files per registry, e.g. from `orch images containerd-hosts`). */
  registryConfigPath?: string;
}

export async function startContainerd(options: StartContainerdOptions = {}): Promise<Containerd> {
  const dir = mkdtempSync(join(tmpdir(), "orch-ctrd-"));
  const socket = join(dir, "containerd.sock");
  const cni = (options.cni ?? true) && existsSync(join(CNI_BIN, "bridge")) && existsSync(join(CNI_BIN, "host-local"));
  mkdirSync(join(dir, "cni"), { recursive: true });
  // A bridge and subnet of its own, so parallel test files do not collide.
  const n = 1 + Math.floor(Math.random() * 250);
  if (cni) {
    writeFileSync(join(dir, "cni", "10-orch.conflist"), JSON.stringify({
      cniVersion: "0.4.0",
      name: `orch-test-${n}`,
      plugins: [
        // A default route through the bridge (service addresses, the host); hairpinMode: a pod reaches itself through a
        // Service that picks it; portmap: hostPort, as kubelet's CNI setups have.
        { type: "bridge", bridge: `orchtest${n}`, isGateway: true, ipMasq: false, hairpinMode: true, ipam: { type: "host-local", ranges: [[{ subnet: `10.${200 + (n % 50)}.${n}.0/24` }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: join(dir, "cni-ipam") } },
        ...(existsSync(join(CNI_BIN, "portmap")) ? [{ type: "portmap", capabilities: { portMappings: true } }] : []),
        { type: "loopback" },
      ],
    }));
  }
  writeFileSync(join(dir, "config.toml"), [
    "version = 2",
    `root = ${JSON.stringify(join(dir, "root"))}`,
    `state = ${JSON.stringify(join(dir, "state"))}`,
    "[grpc]",
    `  address = ${JSON.stringify(socket)}`,
    "[ttrpc]",
    `  address = ${JSON.stringify(`${socket}.ttrpc`)}`,
    "[metrics]",
    '  address = ""',
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${JSON.stringify(join(dir, "opt"))}`,
    '[plugins."io.containerd.grpc.v1.cri"]',
    `  sandbox_image = ${JSON.stringify(SANDBOX_IMAGE)}`,
    "  restrict_oom_score_adj = true",
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    '  [plugins."io.containerd.grpc.v1.cri".cni]',
    `    bin_dir = ${JSON.stringify(CNI_BIN)}`,
    `    conf_dir = ${JSON.stringify(join(dir, "cni"))}`,
    '  [plugins."io.containerd.grpc.v1.cri".containerd]',
    '    snapshotter = "overlayfs"',
    '    default_runtime_name = "runc"',
    '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '      runtime_type = "io.containerd.runc.v2"',
    '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    `        Root = ${JSON.stringify(join(dir, "runc"))}`,
    ...(options.registryConfigPath ? ['  [plugins."io.containerd.grpc.v1.cri".registry]', `    config_path = ${JSON.stringify(options.registryConfigPath)}`] : []),
    "",
  ].join("\n"));
  const logFd = openSync(join(dir, "containerd.log"), "a");
  let child: ChildProcess = spawn("containerd", ["--config", join(dir, "config.toml")], { stdio: ["ignore", logFd, logFd] });
  let exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const client = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: 30_000 });
  const ctr = async (...args: string[]): Promise<string> => (await run("ctr", ["--address", socket, "-n", "k8s.io", ...args], { maxBuffer: 16 << 20 })).stdout;
  const stop = async (): Promise<void> => {
    try {
      const { items } = await client.listPodSandbox({}, { timeoutMs: 10_000 });
      for (const s of items) {
        await client.stopPodSandbox({ podSandboxId: s.id }, { timeoutMs: 20_000 }).catch(() => {});
        await client.removePodSandbox({ podSandboxId: s.id }, { timeoutMs: 20_000 }).catch(() => {});
      }
    } catch {
      // containerd already gone
    }
    client.close();
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    child.kill("SIGKILL");
    // Unmount what is left under the folder (snapshots of containers that did not stop) before deleting it.
    const mounts = readFileSync("/proc/mounts", "utf8").split("\n").map((l) => l.split(" ")[1] ?? "").filter((m) => m.startsWith(dir)).reverse();
    for (const m of mounts) await run("umount", ["-l", m]).catch(() => {});
    if (cni) await run("ip", ["link", "delete", `orchtest${n}`]).catch(() => {}); // CNI leaves its bridge behind
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  };
  const criUp = async (): Promise<void> => {
    await client.waitForReady(20_000);
    const deadline = Date.now() + 20_000;
    // The socket answers before the CRI plugin is up; wait for a CRI answer.
    for (;;) {
      try {
        await client.version({}, { timeoutMs: 2000 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const restart = async (): Promise<void> => {
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    child = spawn("containerd", ["--config", join(dir, "config.toml")], { stdio: ["ignore", logFd, logFd] });
    exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    await criUp();
  };
  try {
    await criUp();
    const importImage = async (file: string): Promise<void> => {
      await ctr("images", "import", file);
    };
    await buildBusyboxImage({ file: join(dir, "pause.tar"), tags: [SANDBOX_IMAGE], cmd: ["sleep", "2147483647"] });
    await importImage(join(dir, "pause.tar"));
    return { dir, endpoint: `unix://${socket}`, client, ctr, importImage, cni, stop, restart };
  } catch (err) {
    const log = existsSync(join(dir, "containerd.log")) ? readFileSync(join(dir, "containerd.log"), "utf8").slice(-2000) : "";
    await stop();
    throw new Error(`containerd did not start: ${(err as Error).message}\n${log}`);
  }
}
