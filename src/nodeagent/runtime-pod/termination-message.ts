// Termination messages (upstream's terminationMessagePath and
// terminationMessagePolicy): each container start gets an empty host file,
// mode 0666 so any user may write it, mounted at the container's path; once the
// container has exited, its first 4 KiB become state.terminated.message. With
// FallbackToLogsOnError, a failed container whose file is empty gets the tail
// of its log instead (the last 80 lines, at most 2 KiB).

import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { open } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { ContainerStatus, Mount } from "../cri/index.js";
import { readLog } from "../logs/log-reader.js";

export const MAX_MESSAGE_BYTES = 4 * 1024;
export const MAX_LOG_MESSAGE_BYTES = 2 * 1024;
export const MAX_LOG_MESSAGE_LINES = 80;

/** Creates this start's file under the pod's folder (containers/<name>/<random>) and returns its mount. */
export function terminationMessageMount(podDir: string, containerName: string, containerPath: string): Mount {
  const dir = join(podDir, "containers", containerName);
  mkdirSync(dir, { recursive: true });
  const hostPath = join(dir, randomBytes(4).toString("hex"));
  closeSync(openSync(hostPath, "w"));
  chmodSync(hostPath, 0o666); // whatever the umask: a non-root container writes it too
  return { containerPath, hostPath, readonly: false, selinuxRelabel: false, propagation: "PROPAGATION_PRIVATE", uidMappings: [], gidMappings: [], recursiveReadOnly: false, image: null };
}

/**
 * The message of an exited container: its file's content (from the mount at
 * `path`), else with the fallback policy and a failure the log's tail; "" when
 * neither says anything. Unreadable files say nothing (removed with the pod).
 */
export async function terminationMessage(status: ContainerStatus, path: string, policy: string): Promise<string> {
  if (path === "") return "";
  const mount = (status.mounts ?? []).find((m) => m.containerPath === path);
  if (mount !== undefined) {
    const fromFile = await readHead(mount.hostPath, MAX_MESSAGE_BYTES);
    if (fromFile !== "") return fromFile;
  }
  const fallback = policy === "FallbackToLogsOnError" && status.exitCode !== 0 && status.reason !== "ContainerCannotRun";
  if (!fallback || !status.logPath) return "";
  return logTail(status.logPath);
}

async function readHead(file: string, max: number): Promise<string> {
  const handle = await open(file, "r").catch(() => undefined);
  if (handle === undefined) return "";
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buf, 0, max, 0);
    return buf.toString("utf8", 0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The last 80 lines of the container's log (content only, both streams), cut to their last 2 KiB. */
export async function logTail(logPath: string): Promise<string> {
  const chunks: Buffer[] = [];
  const sink = { write: (b: Buffer) => (chunks.push(Buffer.from(b)), true), once: () => undefined };
  try {
    await readLog(logPath, { tailLines: MAX_LOG_MESSAGE_LINES }, sink);
  } catch (err) {
    return `Error on reading termination message from logs: ${(err as Error).message}`;
  }
  const all = Buffer.concat(chunks);
  return all.subarray(Math.max(0, all.length - MAX_LOG_MESSAGE_BYTES)).toString("utf8");
}
