// Upstream's kubelet (v1.23.16) as a benchmark column beside orch's node
// agent: joined to an API server on the `k8s.io` naming profile (what the
// kubelet's clients ask for) and to a containerd configured as orch's
// containerd column's (test/support/containerd.ts). The binary comes from
// --kubelet=PATH or $KUBELET_BIN; kubeletBinary() says why the column is
// skipped when there is none. What it needs on these VMs (cgroups v1 hybrid,
// no swap, a shared host) is set in the configuration below, each with why.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { binaryFrom, freePort } from "./upstream-apiserver.js";

/** The kubelet binary (`--kubelet=PATH`, else $KUBELET_BIN), or the reason there is none. */
export function kubeletBinary(argv: string[]): { path: string } | { skip: string } {
  return binaryFrom(argv, "--kubelet", "KUBELET_BIN", "kubelet");
}

function hostIPv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === "IPv4" && !a.internal);
    if (found) return found.address;
  }
  return "127.0.0.1";
}

export interface KubeletOptions {
  kubeconfig: string;
  /** `unix:///…/containerd.sock`. */
  runtimeEndpoint: string;
  /** The sandbox image already imported into the runtime. */
  pauseImage: string;
  nodeName: string;
  maxPods?: number;
}

export interface KubeletProcess {
  readonly pid: number;
  readonly rootDir: string;
  output(): string;
  /** SIGTERM (SIGKILL after 10 s), then removes its folder (unmounting what it left). */
  stop(): Promise<void>;
}

/**
 * The KubeletConfiguration for this VM. Each setting departs from the default for a reason:
 * - cgroupDriver cgroupfs: no systemd manages cgroups here (cgroups v1 hybrid, mounted by hand), and containerd's
 *   runc uses cgroupfs paths as orch's containerd column does.
 * - failSwapOn false: the kubelet refuses to start when it cannot prove swap is off; these VMs have no swap
 *   accounting, so the check is skipped rather than the machine changed.
 * - authentication anonymous + authorization AlwaysAllow, readOnlyPort 0, address 127.0.0.1, free ports: nothing
 *   but the benchmark talks to it, and parallel runs on the host must not collide.
 * - cgroupsPerQOS with cgroupRoot /: the kubelet's usual QOS tree (kubepods/…), as in production; enforceNodeAllocatable
 *   only `pods` (no system/kube reserved cgroups exist on this host).
 * - evictionHard with zero thresholds, imageGCHighThresholdPercent 100: the host is shared with other builds; a
 *   disk or memory dip must not evict the benchmark's pods or collect the imported (unpullable) images.
 * - kubeAPIQPS 50 / kubeAPIBurst 100: the defaults from kubelet 1.27 on; 1.23's 5/10 would throttle its status
 *   writes at 10 pods/s and measure client-side throttling instead of the kubelet (orch's agent has no such limit).
 * - serializeImagePulls false, staticPodPath an empty folder, resolvConf "" (the host's resolv.conf names a
 *   loopback resolver the kubelet would warn about on every pod), protectKernelDefaults false.
 */
function kubeletConfiguration(rootDir: string, port: number, healthzPort: number, maxPods: number): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    "cgroupDriver: cgroupfs",
    "failSwapOn: false",
    "authentication:",
    "  anonymous: {enabled: true}",
    "  webhook: {enabled: false}",
    "  x509: {}",
    "authorization: {mode: AlwaysAllow}",
    "readOnlyPort: 0",
    "address: 127.0.0.1",
    `port: ${port}`,
    "healthzBindAddress: 127.0.0.1",
    `healthzPort: ${healthzPort}`,
    "cgroupsPerQOS: true",
    "cgroupRoot: /",
    "enforceNodeAllocatable: [pods]",
    "evictionHard: {memory.available: \"0%\", nodefs.available: \"0%\", imagefs.available: \"0%\", nodefs.inodesFree: \"0%\"}",
    "imageGCHighThresholdPercent: 100",
    "imageGCLowThresholdPercent: 99",
    "kubeAPIQPS: 50",
    "kubeAPIBurst: 100",
    "serializeImagePulls: false",
    `staticPodPath: ${join(rootDir, "manifests")}`,
    'resolvConf: ""',
    "protectKernelDefaults: false",
    `maxPods: ${maxPods}`,
    "",
  ].join("\n");
}

/** Starts the kubelet; resolves once its process runs (the caller waits for the Node to be Ready through the API). */
export async function startKubelet(binary: string, options: KubeletOptions): Promise<KubeletProcess> {
  const dir = mkdtempSync(join(tmpdir(), "bench-kubelet-"));
  const rootDir = join(dir, "root");
  mkdirSync(join(rootDir, "manifests"), { recursive: true });
  const config = join(dir, "kubelet.yaml");
  writeFileSync(config, kubeletConfiguration(rootDir, await freePort(), await freePort(), options.maxPods ?? 110));
  const args = [
    `--config=${config}`,
    `--kubeconfig=${options.kubeconfig}`,
    "--container-runtime=remote",
    `--container-runtime-endpoint=${options.runtimeEndpoint}`,
    `--pod-infra-container-image=${options.pauseImage}`,
    `--root-dir=${rootDir}`,
    `--cert-dir=${join(dir, "pki")}`,
    `--hostname-override=${options.nodeName}`,
    // Not 127.0.0.1: the kubelet refuses a loopback node IP ("nodeIP can't be loopback address") and then leaves
    // the Node's addresses unset; the host's first non-loopback IPv4 address (no traffic goes to it here).
    `--node-ip=${hostIPv4()}`,
    "--logtostderr=true",
    "--v=1",
  ];
  const child: ChildProcess = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", reject);
  });
  return {
    pid: child.pid!,
    rootDir,
    output: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      // The kubelet leaves its pods' volume mounts (tmpfs for projected volumes) under its root dir.
      const mounts = readFileSync("/proc/mounts", "utf8").split("\n").map((l) => l.split(" ")[1] ?? "").filter((m) => m.startsWith(dir)).reverse();
      for (const m of mounts) {
        try {
          execFileSync("umount", ["-l", m]);
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}
