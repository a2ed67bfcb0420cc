// The embedded runtime's host-root fallback (a container whose image is not
// in the store runs on the host's root file system) and its limits: which
// pods may use it (those marked with the agent's host-root annotation, when
// the agent asks for a marker), and what such a container must not see. The
// host's top-level folders are bound into the container's root, so without
// masks it would read the agent's credentials, the API server's data dir
// (admin.token, store.mdb, keys) and the kernel's sensitive files: those are
// covered, as upstream's runtimes cover /proc/kcore and /sys/firmware.

import { existsSync, statSync } from "node:fs";
import type { PodSandboxConfig } from "../../cri/types.js";

/** Upstream's default masked paths (containerd/CRI's defaults for unprivileged containers). */
export const KERNEL_MASKS: readonly string[] = [
  "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
  "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
];

/** Why a container of this sandbox may not run on the host root, or undefined when it may. */
export function hostRootRefusal(marker: string | undefined, imageName: string, sandbox: PodSandboxConfig | null | undefined): string | undefined {
  if (marker === undefined || sandbox?.annotations?.[marker] === "true") return undefined;
  const pod = sandbox?.metadata ? `pod ${sandbox.metadata.namespace}/${sandbox.metadata.name}` : "the pod";
  return `image ${JSON.stringify(imageName)} is not in the embedded runtime's image store and could not be pulled, and ${pod} is not marked for the host-root fallback ` +
    `(annotation ${marker}: "true"); import the image with "orch images import FILE" or mark the pod (it then counts as privileged)`;
}

function q(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Shell lines hiding `paths` (host paths) under the container root "$R": a
 * directory gets an empty read-only tmpfs, anything else /dev/null bound over
 * it. Paths that do not exist are skipped; a mask that fails fails the start.
 */
export function maskLines(paths: readonly string[]): string[] {
  const lines: string[] = [];
  const wanted = [...new Set(paths.map((p) => p.replace(/\/+$/, "")))].filter((p) => p !== "" && existsSync(p));
  // A path under another masked one is hidden already (and gone from the container's view).
  const outermost = wanted.filter((p) => !wanted.some((o) => o !== p && p.startsWith(`${o}/`)));
  for (const p of outermost) {
    const target = `"$R"${q(p)}`;
    const dir = statSync(p).isDirectory();
    lines.push(dir
      ? `mount -t tmpfs -o ro,nosuid,nodev,noexec,mode=555 orch-masked ${target} || fail ${q(`masking ${p} failed`)}`
      : `mount --bind /dev/null ${target} || fail ${q(`masking ${p} failed`)}`);
  }
  return lines;
}

/** The /proc masks, run once the container's /proc is mounted under `root` (init.sh). */
export function procMaskLines(root: string): string[] {
  return KERNEL_MASKS.filter((p) => p.startsWith("/proc/")).map((p) => {
    const target = q(`${root}${p}`);
    return `if [ -d ${target} ]; then mount -t tmpfs -o ro,nosuid,nodev,noexec orch-masked ${target}; elif [ -e ${target} ]; then mount --bind /dev/null ${target}; fi`;
  });
}

/** The /sys masks, run once /sys is bound under "$R" (setup.sh). */
export function sysMaskLines(): string[] {
  return KERNEL_MASKS.filter((p) => p.startsWith("/sys/")).map((p) => `if [ -d "$R"${q(p)} ]; then mount -t tmpfs -o ro,nosuid,nodev,noexec orch-masked "$R"${q(p)}; fi`);
}
