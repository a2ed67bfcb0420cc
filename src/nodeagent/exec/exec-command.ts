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
  if (!namespaces) {
    const cwd = spec.cwd && existsSync(spec.cwd) ? spec.cwd : "/";
    return tty ? withTerminal([], envList, [...cmd], cwd) : { file: cmd[0]!, args: cmd.slice(1), env: envRecord(envList), cwd };
  }
  if (NSENTER === undefined) throw new ExecSetupError("nsenter (util-linux) is not installed on the node");
  if (info.pid === undefined || info.pid <= 0) throw new ExecSetupError("the runtime does not report the container's process id");
  const target = ["--target", String(info.pid)];
  const user = spec.user;
  const userFlags = user?.uid !== undefined && user.uid !== 0 ? ["--setuid", String(user.uid), "--setgid", String(user.gid ?? 0)] : [];
  // A bare --wd is the container process's own directory: nsenter opens a named one before it enters the root.
  const enterRoot = [NSENTER, ...target, "--mount", "--root", "--wd", ...userFlags, "--"];
  const enterOthers = [NSENTER, ...target, "--pid", "--uts", "--ipc", "--net", "--"];
  if (!tty) {
    const argv = [NSENTER, ...target, "--pid", "--mount", "--uts", "--ipc", "--net", "--root", "--wd", ...userFlags, "--", ...cmd];
    return { file: argv[0]!, args: argv.slice(1), env: envRecord(envList) };
  }
  // The terminal's session starts inside the container's PID namespace (script, a host binary, runs there before
  // the root is entered), so the shell's process groups are ones it can see: a session begun outside makes an
  // interactive shell fail to hand the terminal back when it exits.
  return withTerminal(enterOthers, envList, [...enterRoot, ...cmd]);
}

/** `script` gives `argv` a pseudo-terminal; `prefix` runs script itself (in the container's PID namespace). */
function withTerminal(prefix: string[], envList: string[], argv: string[], cwd?: string): ExecCommand {
  if (SCRIPT === undefined || ENV === undefined) throw new ExecSetupError("script (util-linux) is not installed on the node, so no TTY");
  // script runs its command with $SHELL -c on the host; env -i then gives the command the container's environment alone.
  const inner = [ENV, "-i", ...envList, ...argv].map(shellQuote).join(" ");
  const all = [...prefix, SCRIPT, "-qfec", `exec ${inner}`, "/dev/null"];
  return { file: all[0]!, args: all.slice(1), env: { SHELL: "/bin/sh", PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, ...(cwd !== undefined ? { cwd } : {}) };
}
