// What a container of the embedded runtime runs: its command, environment,
// working directory and user, resolved once at creation from the CRI config
// over the image's config, as upstream runtimes merge them.

import { isAbsolute } from "node:path";
import { status as Code } from "@grpc/grpc-js";
import type * as cri from "../../cri/types.js";
import type { StoredImage } from "../images/store.js";
import { RuntimeError } from "./errors.js";
import { lookupUser } from "./host.js";
import type { ContainerRecord } from "./records.js";

const DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The command (the CRI command and args, else the image's entrypoint and
 * cmd), the environment (the image's, then the config's), the directory and
 * the user (runAsUser, runAsUsername, else the image's user). `rootfs` is
 * where /etc/passwd is read; what could not be honoured goes to `notes`.
 */
export function containerProcess(config: cri.ContainerConfig, image: StoredImage | undefined, rootfs: string, security: cri.LinuxContainerSecurityContext | null, notes: string[]): ContainerRecord["process"] {
  const ic = image?.config ?? {};
  const argv = config.command.length > 0 ? [...config.command, ...config.args] : [...(ic.Entrypoint ?? []), ...(config.args.length > 0 ? config.args : ic.Cmd ?? [])];
  if (argv.length === 0) throw new RuntimeError(Code.INVALID_ARGUMENT, "no command specified");
  const env = new Map<string, string>();
  for (const e of ic.Env ?? [DEFAULT_PATH]) env.set(e.slice(0, e.indexOf("=")), e);
  if (!env.has("PATH")) env.set("PATH", DEFAULT_PATH);
  for (const kv of config.envs) env.set(kv.key, `${kv.key}=${kv.value}`);
  const cwd = config.workingDir || ic.WorkingDir || "/";
  if (!isAbsolute(cwd)) throw new RuntimeError(Code.INVALID_ARGUMENT, `working directory ${JSON.stringify(cwd)} is not absolute`);
  let uid = security?.runAsUser?.value;
  let gid = security?.runAsGroup?.value;
  if (uid === undefined && security?.runAsUsername) {
    const found = lookupUser(rootfs, security.runAsUsername);
    if (found === undefined) throw new RuntimeError(Code.INVALID_ARGUMENT, `user ${JSON.stringify(security.runAsUsername)} not found in the image's /etc/passwd`);
    [uid, gid] = [found.uid, gid ?? found.gid];
  }
  if (uid === undefined && ic.User) {
    const [u, g] = ic.User.split(":");
    const found = /^\d+$/.test(u!) ? { uid: Number(u), gid: Number(g ?? 0) } : lookupUser(rootfs, u!);
    if (found !== undefined) [uid, gid] = [found.uid, gid ?? (g !== undefined && /^\d+$/.test(g) ? Number(g) : found.gid)];
    else notes.push(`image user ${JSON.stringify(ic.User)} not found; running as root`);
  }
  return { argv, env: [...env.values()], cwd, ...(uid !== undefined ? { uid, gid: gid ?? 0 } : {}) };
}

/**
 * The exec-relevant part of an OCI runtime spec, in the verbose ContainerStatus
 * info where containerd puts its full one: the node agent's exec enters the
 * container at `pid` with this environment, directory and user.
 */
export function execSpec(c: ContainerRecord): { process: { env: string[]; cwd: string; user: { uid: number; gid: number } } } {
  return { process: { env: c.process.env, cwd: c.process.cwd, user: { uid: c.process.uid ?? 0, gid: c.process.gid ?? 0 } } };
}
