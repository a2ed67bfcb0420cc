// The container shim of the embedded runtime: a small Perl program that is the
// parent of one container, as containerd-shim and conmon are, so the container
// outlives the runtime. It writes the container's stdout and stderr to the CRI
// log at log_path and its exit status to <dir>/exit-code, then exits with it.

import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Perl (Debian's perl-base is Essential, so every Debian or Ubuntu host has one). */
export const PERL = ["/usr/bin/perl", "/bin/perl"].find(existsSync);

/**
 * argv: <container dir> <log path or ""> <cgroup.procs file>... -- <command...>.
 * The command joins the cgroups (before anything of it runs) and gets a
 * process group of its own, so the runtime can signal -pid without reaching
 * the shim. fd 3 is the control
 * pipe to the runtime: the shim relays the command's `ok <pid>` (then closes
 * it), or sends `error <why>` when the command ended before saying ok.
 *
 * Why each part is there:
 * - CRI records as upstream writes them: `<RFC3339Nano> <stream> <F|P> <text>`,
 *   a line longer than 16 KiB cut into P records, output without a final
 *   newline flushed as a P record when its stream ends;
 * - the log path is checked (device, inode) before each write and reopened
 *   when it was rotated away, so ReopenContainerLog needs no message;
 * - stderr before `ok` is held back: on a failed start it is the error's text,
 *   not container output;
 * - after the command exits, output still buffered in the pipes is drained
 *   for at most 2 s (a stray child may hold them open);
 * - Time::HiRes gives microseconds where installed (the full perl package);
 *   perl-base alone gives whole seconds.
 * - it loads no module before the command runs (strict, warnings and Fcntl
 *   would double Perl's 2 ms start-up, which every container start waits
 *   for); Time::HiRes is loaded when the first line is written. shim.test.ts
 *   runs it under `perl -w -Mstrict` instead.
 */
export const SHIM_SOURCE = String.raw`my ($dir, $log, @cmd) = @ARGV;
my @procs;
push(@procs, shift(@cmd)) while @cmd && $cmd[0] ne '--';
shift(@cmd);
my $F_SETFD = 2; # Linux, as Fcntl would say
my $hires;
my $MAX = 16384;
$SIG{PIPE} = 'IGNORE';
$SIG{HUP} = 'IGNORE';
$SIG{INT} = 'IGNORE';
$SIG{CHLD} = sub {};
open(my $ctl, '>&=', 3) or die "no control pipe on fd 3: $!\n";
pipe(my $out_r, my $out_w) or die "pipe: $!\n";
pipe(my $err_r, my $err_w) or die "pipe: $!\n";
pipe(my $ctl_r, my $ctl_w) or die "pipe: $!\n";
my $pid = fork() // die "fork: $!\n";
if ($pid == 0) {
  setpgrp(0, 0);
  $SIG{$_} = 'DEFAULT' for qw(PIPE HUP INT CHLD);
  open(STDOUT, '>&', $out_w) or die "stdout: $!\n";
  open(STDERR, '>&', $err_w) or die "stderr: $!\n";
  close($ctl);
  open(my $c3, '>&', $ctl_w) or die "control: $!\n";
  fileno($c3) == 3 or die "control pipe on fd " . fileno($c3) . "\n";
  fcntl($c3, $F_SETFD, 0);
  for my $f (@procs) {
    my $p;
    open($p, '>', $f) && print($p "0\n") && close($p) or do { print $c3 "error joining cgroup $f: $!\n"; exit 125 };
  }
  { exec { $cmd[0] } @cmd; }
  print $c3 "error cannot run $cmd[0]: $!\n";
  exit 127;
}
close($out_w);
close($err_w);
close($ctl_w);
(my $id = $dir) =~ s{.*/}{};
$0 = "orch-shim $id";

sub now { return $hires ? Time::HiRes::time() : time() }

sub stamp {
  $hires //= eval { require Time::HiRes; 1 } || 0;
  my ($s, $us) = $hires ? Time::HiRes::gettimeofday() : (time(), 0);
  my @t = gmtime($s);
  return sprintf('%04d-%02d-%02dT%02d:%02d:%02d.%06d000Z', $t[5] + 1900, $t[4] + 1, $t[3], $t[2], $t[1], $t[0], $us);
}

my ($lfh, $ldev, $lino);
sub write_log {
  return if $log eq '';
  my @st = stat($log);
  if (!$lfh || !@st || $st[0] != $ldev || $st[1] != $lino) {
    close($lfh) if $lfh;
    $lfh = undef;
    open($lfh, '>>', $log) or do { $lfh = undef; return };
    ($ldev, $lino) = (stat($lfh))[0, 1];
  }
  syswrite($lfh, $_[0]);
}

my %pending = (stdout => '', stderr => '');
sub emit {
  my ($stream, $data) = @_;
  $pending{$stream} .= $data;
  my $ts = stamp();
  my $out = '';
  while ((my $nl = index($pending{$stream}, "\n")) >= 0) {
    my $line = substr($pending{$stream}, 0, $nl + 1, '');
    chop($line);
    $out .= "$ts $stream P " . substr($line, 0, $MAX, '') . "\n" while length($line) > $MAX;
    $out .= "$ts $stream F $line\n";
  }
  $out .= "$ts $stream P " . substr($pending{$stream}, 0, $MAX, '') . "\n" while length($pending{$stream}) > $MAX;
  write_log($out) if $out ne '';
}
sub flush_stream {
  my ($stream) = @_;
  write_log(stamp() . " $stream P $pending{$stream}\n") if $pending{$stream} ne '';
  $pending{$stream} = '';
}

my ($control, $early, $ok, $status, $deadline) = ('', '', 0, undef, undef);
my %open = (control => $ctl_r, stdout => $out_r, stderr => $err_r);
sub reap {
  return if defined $status || waitpid($pid, 1) != $pid;
  $status = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
  $deadline = now() + 2;
}
while (%open) {
  my $rin = '';
  vec($rin, fileno($_), 1) = 1 for values %open;
  my $wait = defined $deadline ? $deadline - now() : 1;
  my $n = select(my $rout = $rin, undef, undef, $wait > 0 ? $wait : 0);
  reap();
  last if defined $deadline && now() >= $deadline;
  next if $n <= 0;
  for my $name (qw(control stdout stderr)) {
    my $h = $open{$name};
    next unless $h && vec($rout, fileno($h), 1);
    my $got = sysread($h, my $data, 65536);
    if (!$got) {
      delete $open{$name};
      close($h);
      flush_stream($name) if $name ne 'control';
    } elsif ($name eq 'control') {
      $control .= $data;
      if (!$ok && $control =~ /^ok \d+\n/) {
        $ok = 1;
        syswrite($ctl, $control);
        close($ctl);
        emit('stderr', $early) if $early ne '';
      }
    } elsif ($name eq 'stderr' && !$ok) {
      $early .= $data;
    } else {
      emit($name, $data);
    }
  }
}
flush_stream($_) for qw(stdout stderr);
if (!defined $status) {
  waitpid($pid, 0);
  $status = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
}
if (!$ok) {
  my $why = $control =~ /^error / ? $control : "error the container's shim exited with $status before the command started" . ($early =~ /\S/ ? ": $early" : '');
  $why =~ s/\s+\z//;
  syswrite($ctl, "$why\n");
}
if (open(my $f, '>', "$dir/exit-code.tmp")) {
  print $f "$status\n";
  close($f);
  rename("$dir/exit-code.tmp", "$dir/exit-code");
}
exit($status > 255 ? 255 : $status);
`;

/** Writes the shim into the runtime's root (when it changed) and returns its path. */
export function installShim(root: string): string {
  const file = join(root, "shim.pl");
  if (!existsSync(file) || readFileSync(file, "utf8") !== SHIM_SOURCE) {
    writeFileSync(`${file}.tmp`, SHIM_SOURCE);
    renameSync(`${file}.tmp`, file);
  }
  return file;
}

/** The exit status the shim recorded in the container's directory, and when; undefined while none is. */
export function recordedExit(dir: string): { code: number; at: number } | undefined {
  const file = join(dir, "exit-code");
  try {
    const code = Number(readFileSync(file, "utf8").trim());
    if (!Number.isInteger(code)) return undefined;
    return { code, at: Number(statSync(file, { bigint: true }).mtimeNs) };
  } catch {
    return undefined;
  }
}
