// Installing a compiled seccomp filter without native code: the last step of
// the embedded runtime's shim becomes a short Perl program (perl-base is part
// of every Debian system) that enters the container's root and directory,
// installs the filter with prctl(PR_SET_SECCOMP), takes the container's user,
// and execs the command, so the command keeps the shim's PID. As runc does,
// the filter goes in before the user is dropped (while privileged), unless
// no_new_privs is asked for, in which case it goes in as late as possible.

import { existsSync } from "node:fs";

export const PERL = ["/usr/bin/perl", "/bin/perl"].find(existsSync);

// Arguments: prctl number, filter file ("" none), root, working dir, uid, gid ("" keeps root), nnp (0/1),
// capabilities kept in the bounding set ("all", or comma-separated numbers, "" none), then the command.
const SOURCE = `
use strict; use POSIX ();
my ($prctl, $filter, $root, $wd, $uid, $gid, $nnp, $caps, @cmd) = @ARGV;
sub fail { print STDERR "seccomp loader: @_\\n"; exit 125 }
my $fprog;
if ($filter ne "") {
  open(my $fh, "<:raw", $filter) or fail("open $filter: $!");
  my $prog = do { local $/; <$fh> }; close $fh;
  $fprog = pack("S x![P] P", length($prog) / 8, $prog);
}
if ($caps ne "all") {
  my %keep = map { $_ => 1 } grep { length } split(/,/, $caps);
  open(my $lc, "<", "/proc/sys/kernel/cap_last_cap") or fail("cap_last_cap: $!");
  my $last = <$lc>; close $lc; chomp $last;
  for my $c (0 .. $last) { next if $keep{$c}; syscall($prctl + 0, 24, $c, 0, 0, 0) == 0 or fail("dropping capability $c: $!") }
}
sub user { return if $uid eq ""; $) = "$gid $gid"; POSIX::setgid($gid) or fail("setgid $gid: $!"); POSIX::setuid($uid) or fail("setuid $uid: $!") }
sub filter { return unless defined $fprog; syscall($prctl + 0, 22, 2, $fprog, 0, 0) == 0 or fail("installing the seccomp filter: $!") }
if ($root ne "/") { chroot($root) or fail("chroot $root: $!") }
chdir($wd) or fail("chdir $wd: $!");
if ($nnp) { user(); syscall($prctl + 0, 38, 1, 0, 0, 0) == 0 or fail("no_new_privs: $!"); filter() }
else { filter(); user() }
exec { $cmd[0] } @cmd;
print STDERR "exec $cmd[0]: $!\\n"; exit 127;
`;

export interface LoaderOptions {
  /** prctl's system call number on this architecture. */
  prctl: number;
  /** "" installs no filter. */
  filterFile: string;
  /** Capability numbers kept in the bounding set (the command's permitted set when it runs as root); undefined keeps all. */
  capabilities?: readonly number[];
  root: string;
  workingDir: string;
  uid?: number;
  gid?: number;
  /** Set no_new_privs (allowPrivilegeEscalation: false); forced when not root, as the kernel requires it then. */
  noNewPrivs: boolean;
  argv: readonly string[];
}

/** argv that runs `argv` under the filter, or undefined when Perl is missing. */
export function loaderArgv(o: LoaderOptions): string[] | undefined {
  if (PERL === undefined) return undefined;
  const nnp = o.noNewPrivs || process.getuid?.() !== 0;
  return [PERL, "-e", SOURCE, String(o.prctl), o.filterFile, o.root, o.workingDir, o.uid === undefined ? "" : String(o.uid), o.uid === undefined ? "" : String(o.gid ?? 0), nnp ? "1" : "0", o.capabilities === undefined ? "all" : o.capabilities.join(","), ...o.argv];
}

/** Whether a process's argv is the loader (a shim step, not yet the container's command). */
export function isLoader(argv: readonly string[]): boolean {
  return PERL !== undefined && argv[0] === PERL && argv[1] === "-e" && argv[2] === SOURCE;
}
