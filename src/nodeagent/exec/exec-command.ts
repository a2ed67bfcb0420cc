// How the node agent runs `kubectl exec`'s command in a running container, on
// either runtime: the verbose CRI ContainerStatus gives the container's host
// PID and its OCI process (environment, directory, user); nsenter joins its
// namespaces and root. A TTY is a pseudo-terminal from util-linux's `script`
// (no native code). See docs/runtime.md, "exec".

import { existsSync } from "node:fs";

const NSENTER = ["/usr/bin/nsenter", "/bin/nsenter"].find(existsSync);
const SCRIPT = ["/usr/bin/script", "/bin/script"].find(existsSync);
const ENV = ["/usr/bin/env", "/bin/env"].find(existsSync);

/** What exec needs from a container's verbose status info (containerd's shape; the embedded runtime's too). */
export interface ContainerExecInfo {
  pid?: number;
  /** The embedded runtime without root runs containers as plain host processes. */
  isolation?: { namespaces?: boolean };
  runtimeSpec?: { process?: { env?: string[]; cwd?: string; user?: { uid?: number; gid?: number } } };
}

export interface ExecCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Set when the command runs on the host (no namespaces to enter). */
  cwd?: string;
}

export class ExecSetupError extends Error {}

/** Reads ContainerStatus's verbose `info` map. */
export function parseExecInfo(info: Record<string, string> | undefined): ContainerExecInfo {
  try {
    return JSON.parse(info?.info ?? "{}") as ContainerExecInfo;
  } catch {
    return {};
  }
}

function envRecord(env: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    const eq = e.indexOf("=");
    if (eq > 0) out[e.slice(0, eq)] = e.slice(eq + 1);
  }
  return out;
}

/** A POSIX shell word for `s`. */
function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The process to spawn for `cmd` in the container `info` describes, with a pseudo-terminal when `tty`. */
export function execCommand(info: ContainerExecInfo, cmd: readonly string[], tty: boolean): ExecCommand {
  if (cmd.length === 0) throw new ExecSetupError("you must specify at least one command for the container");
  const spec = info.runtimeSpec?.process ?? {};
  const envList = [...(spec.env ?? [])];
  // As containerd does for a terminal exec: programs need to know what the terminal speaks.
  if (tty && !envList.some((e) => e.startsWith("TERM="))) envList.push("TERM=xterm");
  const namespaces = info.isolation?.namespaces !== false;
  let argv: string[];
  let cwd: string | undefined;
  if (namespaces) {
    if (NSENTER === undefined) throw new ExecSetupError("nsenter (util-linux) is not installed on the node");
    if (info.pid === undefined || info.pid <= 0) throw new ExecSetupError("the runtime does not report the container's process id");
    // A bare --wd is the container process's own directory: nsenter opens a named one before it enters the root.
    const user = spec.user;
    const userFlags = user?.uid !== undefined && user.uid !== 0 ? ["--setuid", String(user.uid), "--setgid", String(user.gid ?? 0)] : [];
    argv = [NSENTER, "--target", String(info.pid), "--pid", "--mount", "--uts", "--ipc", "--net", "--root", "--wd", ...userFlags, "--", ...cmd];
  } else {
    argv = [...cmd];
    cwd = spec.cwd && existsSync(spec.cwd) ? spec.cwd : "/";
  }
  if (!tty) return { file: argv[0]!, args: argv.slice(1), env: envRecord(envList), ...(cwd !== undefined ? { cwd } : {}) };
  if (SCRIPT === undefined || ENV === undefined) throw new ExecSetupError("script (util-linux) is not installed on the node: no TTY");
  // script runs its command with $SHELL -c on the host; env -i then gives the command the container's environment alone.
  const inner = [ENV, "-i", ...envList, ...argv].map(shellQuote).join(" ");
  return { file: SCRIPT, args: ["-qfec", `exec ${inner}`, "/dev/null"], env: { SHELL: "/bin/sh", PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, ...(cwd !== undefined ? { cwd } : {}) };
}
