// The embedded runtime's RuntimeDefault profile, our own: everything is
// allowed except the calls that reach past the container into the node
// (kernel modules, the clock, swap, reboot, mounts and namespaces, keyrings,
// BPF and perf, raw I/O ports, file handles by inode, the kernel log). The
// embedded runtime keeps root's capabilities, so this list is the fence.

import type { SeccompProfile } from "./bpf.js";

const DENIED = [
  // modules, kexec, reboot, swap, accounting
  "init_module", "finit_module", "delete_module", "create_module", "query_module", "get_kernel_syms",
  "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct",
  // the node's clock
  "settimeofday", "clock_settime", "clock_adjtime", "stime",
  // mounts and namespaces
  "mount", "umount", "umount2", "pivot_root", "unshare", "setns",
  "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
  // keyrings
  "add_key", "request_key", "keyctl",
  // kernel tracing, BPF, handles by inode, quotas, I/O ports, the kernel log
  "bpf", "perf_event_open", "lookup_dcookie", "userfaultfd", "name_to_handle_at", "open_by_handle_at",
  "quotactl", "quotactl_fd", "nfsservctl", "iopl", "ioperm", "syslog", "vhangup",
  // obsolete calls
  "uselib", "ustat", "sysfs", "_sysctl", "vm86", "vm86old",
];

export const RUNTIME_DEFAULT: SeccompProfile = {
  defaultAction: "SCMP_ACT_ALLOW",
  syscalls: [{ names: DENIED, action: "SCMP_ACT_ERRNO", errnoRet: 1 }],
};
