// The embedded runtime's records as CRI answers: sandbox and container
// statuses and list items, shaped as upstream runtimes fill them (the verbose
// info carries what crictl inspect and the agent's exec read), and the label
// selectors of list filters.

import type * as cri from "../../cri/types.js";
import { execSpec } from "./container-process.js";
import type { Isolation } from "./launcher.js";
import type { ContainerRecord, SandboxRecord } from "./records.js";

export function sandboxStatus(s: SandboxRecord, verbose: boolean): cri.DeepPartial<cri.PodSandboxStatusResponse> {
  const hostNetwork = s.netns === "";
  return {
    status: {
      id: s.id,
      metadata: s.config.metadata,
      state: s.state,
      createdAt: s.createdAt,
      network: { ip: s.ip, additionalIps: [] },
      linux: { namespaces: { options: { network: hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "CONTAINER" } } },
      labels: s.config.labels,
      annotations: s.config.annotations,
      runtimeHandler: s.runtimeHandler,
    },
    info: verbose ? { info: JSON.stringify({ hostNetwork, netns: s.netns, hostname: s.hostname }) } : {},
    containersStatuses: [],
    timestamp: 0,
  };
}

export function sandboxItem(s: SandboxRecord): cri.DeepPartial<cri.PodSandbox> {
  return { id: s.id, metadata: s.config.metadata, state: s.state, createdAt: s.createdAt, labels: s.config.labels, annotations: s.config.annotations, runtimeHandler: s.runtimeHandler };
}

export function containerItem(c: ContainerRecord): cri.DeepPartial<cri.Container> {
  return { id: c.id, podSandboxId: c.podSandboxId, metadata: c.config.metadata, image: { image: c.image }, imageRef: c.imageId || c.image, state: c.state, createdAt: c.createdAt, labels: c.config.labels, annotations: c.config.annotations, imageId: c.imageId };
}

export function containerStatus(c: ContainerRecord, verbose: boolean, isolation: Isolation): cri.DeepPartial<cri.ContainerStatusResponse> {
  return {
    status: {
      id: c.id,
      metadata: c.config.metadata,
      state: c.state,
      createdAt: c.createdAt,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      image: { image: c.image },
      imageRef: c.imageId || c.image,
      reason: c.reason,
      message: c.message,
      labels: c.config.labels,
      annotations: c.config.annotations,
      mounts: c.config.mounts,
      logPath: c.logPath,
      resources: c.resources === null ? null : { linux: c.resources },
      imageId: c.imageId,
      user: { linux: { uid: c.process.uid ?? 0, gid: c.process.gid ?? 0, supplementalGroups: [] } },
    },
    info: verbose ? { info: JSON.stringify({ pid: c.pid, rootfs: c.imageId === "" ? "host" : "image", isolation, notes: c.notes, ...attachInfo(c), process: { argv: c.process.argv, cwd: c.process.cwd }, runtimeSpec: execSpec(c) }) } : {},
  };
}

/** Whether `labels` has every key and value of `selector`. */
/**
 * Where a running container started with stdin or a terminal takes its input:
 * its shim's attach socket (shim.ts), named through the shim's working
 * directory so the path stays short. Not part of CRI (whose Attach answers a
 * streaming URL): the agent's attach reads it from the verbose info.
 */
function attachInfo(c: ContainerRecord): { attach?: { socket: string; stdin: boolean; stdinOnce: boolean; tty: boolean } } {
  if (c.state !== "CONTAINER_RUNNING" || c.shimPid === undefined || (c.config.stdin !== true && c.config.tty !== true)) return {};
  return { attach: { socket: `/proc/${c.shimPid}/cwd/attach.sock`, stdin: c.config.stdin === true, stdinOnce: c.config.stdinOnce === true, tty: c.config.tty === true } };
}

export function matches(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(selector ?? {})) if (labels[k] !== v) return false;
  return true;
}
