// The capabilities a container's command keeps (issue 7): containerd's
// default set for unprivileged containers, changed by the container's
// securityContext.capabilities as containerd's CRI does it (add "ALL", then
// drop "ALL", then the named additions, then the named drops). The launcher
// drops every other capability from the bounding set before the command runs
// (seccomp/loader.ts), so a root command has exactly these and a non-root one
// none. Privileged containers keep everything.

/** Linux capability numbers (linux/capability.h). */
export const CAPABILITIES: Readonly<Record<string, number>> = {
  CHOWN: 0, DAC_OVERRIDE: 1, DAC_READ_SEARCH: 2, FOWNER: 3, FSETID: 4, KILL: 5, SETGID: 6, SETUID: 7, SETPCAP: 8,
  LINUX_IMMUTABLE: 9, NET_BIND_SERVICE: 10, NET_BROADCAST: 11, NET_ADMIN: 12, NET_RAW: 13, IPC_LOCK: 14, IPC_OWNER: 15,
  SYS_MODULE: 16, SYS_RAWIO: 17, SYS_CHROOT: 18, SYS_PTRACE: 19, SYS_PACCT: 20, SYS_ADMIN: 21, SYS_BOOT: 22, SYS_NICE: 23,
  SYS_RESOURCE: 24, SYS_TIME: 25, SYS_TTY_CONFIG: 26, MKNOD: 27, LEASE: 28, AUDIT_WRITE: 29, AUDIT_CONTROL: 30,
  SETFCAP: 31, MAC_OVERRIDE: 32, MAC_ADMIN: 33, SYSLOG: 34, WAKE_ALARM: 35, BLOCK_SUSPEND: 36, AUDIT_READ: 37,
  PERFMON: 38, BPF: 39, CHECKPOINT_RESTORE: 40,
};

/** containerd's default set (oci.defaultUnixCaps). */
export const DEFAULT_CAPABILITIES: readonly string[] = [
  "CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID", "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE",
];

const bare = (name: string) => name.toUpperCase().replace(/^CAP_/, "");

/** The capability numbers kept, sorted; names unknown to the table are ignored. */
export function containerCapabilities(c: { addCapabilities?: readonly string[]; dropCapabilities?: readonly string[] } | null | undefined): number[] {
  const add = (c?.addCapabilities ?? []).map(bare);
  const drop = (c?.dropCapabilities ?? []).map(bare);
  let set = new Set(DEFAULT_CAPABILITIES);
  if (add.includes("ALL")) set = new Set(Object.keys(CAPABILITIES));
  if (drop.includes("ALL")) set = new Set();
  for (const a of add) if (a !== "ALL" && a in CAPABILITIES) set.add(a);
  for (const d of drop) set.delete(d);
  return [...set].map((n) => CAPABILITIES[n]!).sort((a, b) => a - b);
}
