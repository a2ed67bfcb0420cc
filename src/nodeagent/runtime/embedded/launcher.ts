// Starts one embedded-runtime container as a host process, under the shim
// (shim.ts) that outlives the runtime. With namespaces (root, util-linux
// unshare), generated shell scripts enter new mount, UTS, IPC and PID
// namespaces, build the root file system (an overlay over the image, or the
// host's directories bound under a tmpfs), mount volumes, and fork the command
// as PID 1 of its PID namespace, then wait and exit with its status (128+signal
// when killed). Without namespaces the command runs directly, on the host root.
// The scripts report `ok <pid>` or `error <why>` on fd 3, which the shim relays.

import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { PERL } from "./shim.js";
import { syscallNumber } from "./seccomp/bpf.js";
import { isLoader, loaderArgv } from "./seccomp/loader.js";
import { resolveInRoot } from "./container-paths.js";
import { maskLines, procMaskLines, sysMaskLines } from "./host-root.js";
import { sysctlFile } from "./sysctls.js";

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find(existsSync);
const NSENTER = ["/usr/bin/nsenter", "/bin/nsenter"].find(existsSync);
const SETSID = ["/usr/bin/setsid", "/bin/setsid"].find(existsSync);

/** What isolation this host gives containers, probed once per runtime. */
export interface Isolation {
  namespaces: boolean;
  overlay: boolean;
  /** A prepared /dev (device nodes, links, pts/ and shm/) copied into each container's; absent where mknod is refused. */
  devTemplate?: string;
  /** Why a feature is missing (empty when all is there). */
  notes: string[];
}

export function probeIsolation(scratch: string): Isolation {
  const notes: string[] = [];
  if (process.getuid?.() !== 0) return { namespaces: false, overlay: false, notes: ["not running as root: containers run as plain host processes without namespaces"] };
  if (UNSHARE === undefined || NSENTER === undefined) return { namespaces: false, overlay: false, notes: ["util-linux unshare/nsenter not found: containers run without namespaces"] };
  const ns = spawnSync(UNSHARE, ["--mount", "--uts", "--ipc", "--pid", "--fork", "--propagation", "private", "--", "/bin/true"], { encoding: "utf8", timeout: 5000 });
  if (ns.status !== 0) return { namespaces: false, overlay: false, notes: [`unshare failed (${(ns.stderr || ns.error?.message || "").trim()}): containers run without namespaces`] };
  const dir = mkdtempSync(join(scratch, ".overlay-probe-"));
  for (const d of ["l", "u", "w", "m"]) mkdirSync(join(dir, d));
  const ov = spawnSync(UNSHARE, ["--mount", "--propagation", "private", "--", "/bin/mount", "-t", "overlay", "overlay", "-o", `lowerdir=${dir}/l,upperdir=${dir}/u,workdir=${dir}/w`, `${dir}/m`], { encoding: "utf8", timeout: 5000 });
  rmSync(dir, { recursive: true, force: true });
  const overlay = ov.status === 0;
  if (!overlay) notes.push(`overlay mounts fail (${ov.stderr.trim()}): each container gets a copy of its image`);
  const devTemplate = makeDevTemplate(join(scratch, "dev-template"));
  return { namespaces: true, overlay, notes, ...(devTemplate !== undefined ? { devTemplate } : {}) };
}

/** The devices a container's minimal /dev holds (as runc's defaults). */
const DEVICES = ["null", "zero", "full", "random", "urandom", "tty"];

/**
 * A /dev for containers, made once: nodes with the host's device numbers, the
 * fd/stdin/stdout/stderr links, pts/ and shm/. One `cp -a` of it replaces a
 * bind mount per device and a process per link in every container start.
 * Undefined where the host refuses mknod (then each device is bound).
 */
function makeDevTemplate(dir: string): string | undefined {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "pts"), { recursive: true });
  mkdirSync(join(dir, "shm"));
  const nodes = DEVICES.map((n) => {
    const st = statSync(`/dev/${n}`);
    return `mknod -m ${(st.mode & 0o777).toString(8)} ${shQuote(join(dir, n))} c ${Math.floor(st.rdev / 256) & 0xfff} ${(st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00)}`;
  });
  if (spawnSync("/bin/sh", ["-c", nodes.join(" && ")], { timeout: 5000 }).status !== 0) return undefined;
  for (const [link, target] of [["fd", "/proc/self/fd"], ["stdin", "/proc/self/fd/0"], ["stdout", "/proc/self/fd/1"], ["stderr", "/proc/self/fd/2"]] as const) symlinkSync(target, join(dir, link));
  return dir;
}

export interface VolumeMount {
  hostPath: string;
  containerPath: string;
  readonly: boolean;
}

export interface LaunchSpec {
  /** The container's own directory (scripts, overlay upper/work, exit code). */
  dir: string;
  /** The shim program (installShim) and the CRI log file it writes ("" discards the output). */
  shim: string;
  logPath: string;
  /** The image's unpacked root, or undefined to run on the host's root file system. */
  imageRoot: string | undefined;
  argv: string[];
  env: string[];
  workingDir: string;
  uid?: number;
  gid?: number;
  hostname: string;
  mounts: VolumeMount[];
  /** Files bound over /etc/<name> (hosts, resolv.conf, hostname). */
  etcFiles: Record<string, string>;
  /** cgroup.procs files the shim joins before anything else runs. */
  cgroupProcs: string[];
  /** Privileged: the host's whole /dev instead of the minimal one. */
  privileged: boolean;
  /** Host device nodes to bind into the container's /dev (CRI devices). */
  devices: { hostPath: string; containerPath: string }[];
  /** Mount the root file system read-only once everything is mounted on it. */
  readonlyRoot: boolean;
  /** The pod's network namespace to enter, "" for the host's. */
  netns: string;
  /**
   * Host PID of a running container whose PID namespace this one joins (CRI's
   * TARGET mode, an ephemeral container's targetContainerName) instead of
   * having its own.
   */
  pidTarget?: number;
  /** Host paths a host-root container (no imageRoot) must not see (host-root.ts); unprivileged ones also get the kernel masks. */
  hostRootMasks?: string[];
  /** Capability numbers the command keeps (bounding set); undefined keeps the shim's (privileged containers). */
  capabilities?: readonly number[];
  /** The pod's sysctls (name → value), written in the container's IPC and the pod's network namespaces (sysctls.ts checks them first). */
  sysctls?: Record<string, string>;
  /** A compiled seccomp filter to install just before the command runs. */
  seccomp?: { filterFile: string };
  /** no_new_privs for the command (allowPrivilegeEscalation: false), with or without a seccomp filter. */
  noNewPrivs?: boolean;
  /** CRI's stdin, stdinOnce and tty: the shim gives the command a pipe or a terminal as its input, reached through its attach socket. */
  stdio?: { stdin: boolean; stdinOnce: boolean; tty: boolean };
  isolation: Isolation;
}

export interface Launched {
  /** The shim's exit: the container's status (128+signal), or a signal when the shim itself was killed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The container's first process (host PID): the one signals go to. */
  pid: number;
  /** The shim's PID. */
  shimPid: number;
}

/** Single-quotes a word for sh. */
export function shQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function q(words: readonly string[]): string {
  return words.map(shQuote).join(" ");
}

// Top-level host directories bound into a host-root container's tmpfs root;
// /proc, /sys and /dev are set up afresh for each container.
function hostRootEntries(): { dirs: string[]; links: string[] } {
  const dirs: string[] = [];
  const links: string[] = [];
  for (const e of readdirSync("/", { withFileTypes: true })) {
    if (["proc", "sys", "dev", "lost+found"].includes(e.name)) continue;
    if (e.isSymbolicLink()) links.push(e.name);
    else if (e.isDirectory()) dirs.push(e.name);
  }
  return { dirs, links };
}

/** The shim run inside the new mount/UTS/IPC namespaces (and as parent of the new PID namespace). */
export function setupScript(spec: LaunchSpec): string {
  const R = join(spec.dir, "rootfs");
  const lines = [
    "set -e",
    `fail() { echo "error $*" >&3; exit 125; }`,
    `R=${shQuote(R)}`,
    `mkdir -p "$R"`,
  ];
  if (spec.imageRoot !== undefined) {
    const upper = join(spec.dir, "upper");
    const work = join(spec.dir, "work");
    if (spec.isolation.overlay) {
      lines.push(`mkdir -p ${q([upper, work])}`);
      lines.push(`mount -t overlay overlay -o ${shQuote(`lowerdir=${spec.imageRoot},upperdir=${upper},workdir=${work}`)} "$R" || fail "overlay mount of the image failed"`);
    } else {
      lines.push(`[ -e "$R/.orch-copied" ] || { cp -a ${shQuote(`${spec.imageRoot}/.`)} "$R/" && touch "$R/.orch-copied"; } || fail "copying the image failed"`);
      lines.push(`mount --bind "$R" "$R"`); // a mount of its own, so it can be made read-only
    }
  } else {
    const { dirs, links } = hostRootEntries();
    lines.push(`mount -t tmpfs -o mode=755 tmpfs "$R" || fail "tmpfs root failed"`);
    for (const d of dirs) lines.push(`mkdir -p "$R"/${shQuote(d)} && mount --rbind /${shQuote(d)} "$R"/${shQuote(d)}`);
    for (const l of links) lines.push(`cp -P /${shQuote(l)} "$R"/${shQuote(l)}`);
  }
  lines.push(
    // A process only for what the image lacks (images usually have them all).
    `for d in proc sys dev etc tmp; do [ -d "$R/$d" ] || mkdir -p "$R/$d"; done`,
    `mount --rbind /sys "$R/sys"`,
  );
  if (spec.privileged) {
    lines.push(`mount --rbind /dev "$R/dev"`); // privileged: every host device, as upstream
  } else if (spec.isolation.devTemplate !== undefined) {
    lines.push(
      `mount -t tmpfs -o nosuid,mode=755 tmpfs "$R/dev"`,
      `cp -a ${shQuote(`${spec.isolation.devTemplate}/.`)} "$R/dev/"`, // nodes, links, pts/ and shm/ in one process
      `mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$R/dev/shm"`,
    );
  } else {
    lines.push(
      `mount -t tmpfs -o nosuid,mode=755 tmpfs "$R/dev"`,
      // Mount points are made with the shell's ": >" rather than touch: a process less each (a container start forks dozens).
      `for n in ${DEVICES.join(" ")}; do : > "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done`,
      `mkdir -p "$R/dev/pts" "$R/dev/shm" && mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$R/dev/shm"`,
      `ln -s /proc/self/fd "$R/dev/fd"; ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"`,
    );
  }
  if (spec.imageRoot === undefined) {
    lines.push(...maskLines(spec.hostRootMasks ?? []));
    if (!spec.privileged) lines.push(...sysMaskLines());
  }
  for (const d of spec.devices) {
    const target = `"$R"${shQuote(d.containerPath)}`;
    lines.push(`mkdir -p "$(dirname ${target})"; [ -e ${target} ] || : > ${target}; mount --bind ${shQuote(d.hostPath)} ${target} || fail ${shQuote(`device ${d.hostPath} failed`)}`);
  }
  for (const [name, file] of Object.entries(spec.etcFiles)) {
    lines.push(`[ -e "$R/etc/${name}" ] || : > "$R/etc/${name}"; mount --bind ${shQuote(file)} "$R/etc/${name}"`);
  }
  for (const m of spec.mounts) {
    // Host-root containers see the host's top-level folders (and its top-level links, copied).
    const target = `"$R"${shQuote(resolveInRoot(spec.imageRoot ?? "/", m.containerPath))}`;
    lines.push(
      `if [ -d ${shQuote(m.hostPath)} ]; then mkdir -p ${target}; else mkdir -p "$(dirname ${target})"; [ -e ${target} ] || : > ${target}; fi`,
      `mount --rbind ${shQuote(m.hostPath)} ${target} || fail ${shQuote(`mounting ${m.hostPath} at ${m.containerPath} failed`)}`,
    );
    if (m.readonly) lines.push(`mount -o remount,bind,ro ${target} || fail ${shQuote(`read-only remount of ${m.containerPath} failed`)}`);
  }
  if (spec.readonlyRoot) lines.push(`mount -o remount,ro${spec.imageRoot !== undefined && !spec.isolation.overlay ? ",bind" : ""} "$R" || fail "read-only root failed"`);
  // The UTS namespace's name through /proc (a shell builtin; `hostname` where /proc/sys is read-only).
  lines.push(`{ echo ${shQuote(spec.hostname)} > /proc/sys/kernel/hostname; } 2>/dev/null || hostname ${shQuote(spec.hostname)}`);
  // /proc is still the host's, but these files answer for the writer's IPC and network namespaces.
  for (const [name, value] of Object.entries(spec.sysctls ?? {})) {
    lines.push(`{ echo ${shQuote(value)} > ${shQuote(sysctlFile(name))}; } 2>/dev/null || fail ${shQuote(`setting sysctl ${name}=${value} failed`)}`);
  }
  // Enter a new PID namespace without forking: the waiter's first child is
  // that namespace's init, so the waiter must fork nothing else before it.
  // A container joining its target's namespace needs none (wait.sh enters it).
  const wait = `/bin/sh ${shQuote(join(spec.dir, "wait.sh"))}`;
  lines.push(spec.pidTarget !== undefined ? `exec ${wait}` : `exec ${shQuote(UNSHARE!)} --pid -- ${wait}`);
  return lines.join("\n") + "\n";
}

/** Run as the parent of the new PID namespace: starts the init, reports its PID, waits and exits with its status (the shim records it). */
export function waitScript(spec: LaunchSpec): string {
  if (spec.pidTarget !== undefined) {
    // nsenter forks the init into the target's namespace, where $! would not be
    // its host PID: the init reports itself (initScript).
    return [
      // A background job's input is /dev/null unless redirected: the container's own (fd 4 holds it) is given back.
      "exec 4<&0",
      `${shQuote(NSENTER!)} --target ${spec.pidTarget} --pid -- /bin/sh ${shQuote(join(spec.dir, "init.sh"))} <&4 4<&- &`,
      "child=$!",
      "exec 3>&-",
      `wait "$child"`,
    ].join("\n") + "\n";
  }
  return [
    "exec 4<&0",
    `/bin/sh ${shQuote(join(spec.dir, "init.sh"))} <&4 4<&- &`,
    "child=$!",
    `echo "ok $child" >&3`,
    "exec 3>&-",
    `wait "$child"`,
  ].join("\n") + "\n";
}

/**
 * The last step: enter the root and directory, take the user, and exec the
 * command; with a seccomp filter, capabilities to drop or no_new_privs the
 * Perl loader does it (installing the filter on the way), otherwise unshare --root.
 */
function finalExec(spec: LaunchSpec, root: string, workingDir: string, withUser: boolean): string[] {
  const user = withUser && spec.uid !== undefined ? { uid: spec.uid, gid: spec.gid ?? 0 } : {};
  if (spec.seccomp !== undefined || spec.capabilities !== undefined || spec.noNewPrivs === true) {
    const argv = loaderArgv({
      prctl: syscallNumber("prctl")!, filterFile: spec.seccomp?.filterFile ?? "", root, workingDir, noNewPrivs: spec.noNewPrivs ?? false, argv: spec.argv, ...user,
      ...(spec.capabilities !== undefined ? { capabilities: spec.capabilities } : {}),
    });
    if (argv !== undefined) return argv;
  }
  if (root === "/") return [...spec.argv];
  const userFlags = user.uid !== undefined ? ["-S", String(user.uid), "-G", String(user.gid)] : [];
  return [UNSHARE!, `--root=${root}`, `--wd=${workingDir}`, ...userFlags, "--", ...spec.argv];
}

/**
 * PID 1 of the container (or, in a target's namespace, one process more of
 * it): mounts its /proc, then becomes the command inside the root.
 */
export function initScript(spec: LaunchSpec): string {
  const R = join(spec.dir, "rootfs");
  return [
    // The host's /proc is still mounted here, so /proc/self/stat names this shell by its host PID; `read` is a builtin (no fork).
    ...(spec.pidTarget !== undefined ? [`read -r self rest < /proc/self/stat`, `echo "ok $self" >&3`] : []),
    "exec 3>&-",
    `mount -t proc proc ${shQuote(join(R, "proc"))} || exit 125`,
    ...(spec.imageRoot === undefined && !spec.privileged ? procMaskLines(R) : []),
    // A terminal becomes the controlling one of a session the command leads, inside the container's PID namespace
    // (an interactive shell restores its process group on exit: one outside the namespace is not found).
    `exec ${spec.stdio?.tty && SETSID !== undefined ? `${shQuote(SETSID)} -c ` : ""}/usr/bin/env -i ${q(spec.env)} ${q(finalExec(spec, R, spec.workingDir, true))}`,
  ].join("\n") + "\n";
}

/**
 * What the shim execs once it has joined the container's cgroups: with
 * namespaces, the step that enters them (setup.sh runs inside); without,
 * launch.sh. No shell runs before it: each process in this chain is time
 * every container start waits for.
 */
export function shimCommand(spec: LaunchSpec): string[] {
  if (!spec.isolation.namespaces) return ["/bin/sh", join(spec.dir, "launch.sh")];
  const net = spec.netns === "" ? [] : [NSENTER!, `--net=${spec.netns}`];
  return [...net, UNSHARE!, "--mount", "--uts", "--ipc", "--propagation", "private", "--", "/bin/sh", join(spec.dir, "setup.sh")];
}

/** The shim's options before the cgroup files: +stdin, +tty, +once (shim.ts). */
function shimFlags(spec: LaunchSpec): string[] {
  const o = spec.stdio;
  if (o === undefined || (!o.stdin && !o.tty)) return [];
  return [...(o.stdin ? ["+stdin"] : []), ...(o.tty ? ["+tty"] : []), ...(o.stdin && o.stdinOnce ? ["+once"] : [])];
}

/** Without namespaces: reports the PID and runs the command directly, on the host root. */
export function launchScript(spec: LaunchSpec): string {
  const cwd = existsSync(spec.workingDir) ? spec.workingDir : "/";
  return [`cd ${shQuote(cwd)}`, `echo "ok $$" >&3`, "exec 3>&-", `exec /usr/bin/env -i ${q(spec.env)} ${q(finalExec(spec, "/", cwd, false))}`].join("\n") + "\n";
}

/**
 * Writes the scripts and starts the shim detached (a session of its own: a
 * Ctrl-C to the runtime's process group does not reach it); resolves once the
 * command runs, rejects with the shim's reason. The runtime keeps no handle
 * that would hold the container: the shim's exit is still reported while the
 * runtime lives, and after a restart the runtime finds the shim by its PID.
 */
export function launch(spec: LaunchSpec): Promise<Launched> {
  if (PERL === undefined) return Promise.reject(new Error("perl not found: the embedded runtime's container shim needs it (Debian: perl-base)"));
  mkdirSync(spec.dir, { recursive: true });
  rmSync(join(spec.dir, "exit-code"), { force: true });
  if (spec.isolation.namespaces) {
    writeFileSync(join(spec.dir, "setup.sh"), setupScript(spec));
    writeFileSync(join(spec.dir, "wait.sh"), waitScript(spec));
    writeFileSync(join(spec.dir, "init.sh"), initScript(spec));
  } else {
    writeFileSync(join(spec.dir, "launch.sh"), launchScript(spec));
  }
  // The shim's own complaints (a perl failure) go to a file: nothing may tie it to the runtime's pipes.
  const shimLog = join(spec.dir, "shim.log");
  const errFd = openSync(shimLog, "a");
  const child = spawn(PERL, [spec.shim, spec.dir, spec.logPath, ...shimFlags(spec), ...spec.cgroupProcs, "--", ...shimCommand(spec)], {
    stdio: ["ignore", "ignore", errFd, "pipe"],
    detached: true,
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  closeSync(errFd);
  // Listen at once: a short command may be over before the caller looks.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let control = "";
    let done = false;
    const fd3 = child.stdio[3] as Readable;
    const fail = (why: string): void => {
      if (done) return;
      done = true;
      reject(new Error(why));
    };
    child.once("error", (err) => fail(err.message));
    fd3.setEncoding("utf8");
    fd3.on("data", (chunk: string) => {
      control += chunk;
      const m = /^ok (\d+)\n/.exec(control);
      if (m === null || done) return;
      done = true;
      fd3.destroy();
      child.unref(); // the runtime may exit while the container runs
      resolve({ exited, pid: Number(m[1]), shimPid: child.pid! });
    });
    // The shim closes fd 3 after `ok`, or after `error <why>` once the command has ended.
    fd3.once("close", () => {
      if (control.startsWith("error ")) return fail(control.slice(6).trim());
      void exited.then(({ code, signal }) => {
        let why = "";
        try {
          why = readFileSync(shimLog, "utf8").trim();
        } catch {
          // no complaint written
        }
        fail(`the container's shim exited with ${code ?? signal} before the command started${why ? `: ${why}` : ""}`);
      });
    });
  });
}

/**
 * Resolves once `pid` runs the container's command rather than one of the
 * shim's steps (init.sh, env -i, unshare --root), as runc returns from start
 * only after the exec; or once the process is gone. Exec and signals sent
 * after StartContainer then reach the command itself.
 */
export async function commandStarted(pid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    let argv: string[];
    try {
      argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    } catch {
      return;
    }
    // Empty while an exec is under way, and for a zombie (then the command has run).
    if (argv[0] === "" && !(await isZombie(pid))) {
      await new Promise((r) => setTimeout(r, 2));
      continue;
    }
    const step = (argv[0] === "/bin/sh" && /\/(launch|setup|wait|init)\.sh$/.test(argv[1] ?? "")) || (argv[0] === "/usr/bin/env" && argv[1] === "-i") || (argv[0] === UNSHARE && (argv[1] ?? "").startsWith("--root=")) || isLoader(argv);
    if (!step) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function isZombie(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return true; // gone
  }
}

/** argv of a command run inside a running container's namespaces and root (ExecSync). */
export function execArgv(pid: number, isolation: Isolation, cmd: string[]): string[] {
  if (!isolation.namespaces) return cmd;
  return [NSENTER!, "--target", String(pid), "--pid", "--mount", "--uts", "--ipc", "--net", "--root", "--wd", "--", ...cmd];
}
