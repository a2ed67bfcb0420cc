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
my %opt;
$opt{substr(shift(@cmd), 1)} = 1 while @cmd && $cmd[0] =~ /^\+/;
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
# +tty: a pseudo-terminal (/dev/ptmx, unlocked, its number asked) is the
# command's stdin, stdout and stderr; +stdin without it: a pipe is its stdin.
my ($pty, $in_r, $in_w);
if ($opt{tty}) {
  open($pty, '+<', '/dev/ptmx') or die "ptmx: $!\n";
  my $n = pack('i', 0);
  ioctl($pty, 0x40045431, $n) or die "unlockpt: $!\n";
  ioctl($pty, 0x80045430, $n) or die "ptsname: $!\n";
  $opt{pts} = '/dev/pts/' . unpack('i', $n);
} elsif ($opt{stdin}) {
  pipe($in_r, $in_w) or die "pipe: $!\n";
}
my $pid = fork() // die "fork: $!\n";
if ($pid == 0) {
  $SIG{$_} = 'DEFAULT' for qw(PIPE HUP INT CHLD);
  if ($pty) {
    # A session of its own whose controlling terminal is the slave side.
    require POSIX;
    POSIX::setsid() or die "setsid: $!\n";
    close($pty);
    open(my $t, '+<', $opt{pts}) or die "$opt{pts}: $!\n";
    open(STDIN, '<&', $t) or die "stdin: $!\n";
    open(STDOUT, '>&', $t) or die "stdout: $!\n";
    open(STDERR, '>&', $t) or die "stderr: $!\n";
    close($t);
  } else {
    setpgrp(0, 0);
    if ($in_r) { close($in_w); open(STDIN, '<&', $in_r) or die "stdin: $!\n"; close($in_r) }
    open(STDOUT, '>&', $out_w) or die "stdout: $!\n";
    open(STDERR, '>&', $err_w) or die "stderr: $!\n";
  }
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
close($in_r) if $in_r;
(my $id = $dir) =~ s{.*/}{};
$0 = "orch-shim $id";

# The attach socket (+stdin or +tty): attach.sock in the container's directory,
# bound by a relative name (a full path may pass sun_path's 108 bytes), mode
# 0600; the agent reaches it as /proc/<shim pid>/cwd/attach.sock. A client
# sends frames of <type byte><length, 4 bytes big-endian><payload>: 0 input,
# 1 a terminal size (cols, rows: 2 bytes each), 2 the end of its input. With
# +once the command's input ends when the first client that sent input ends
# its input or goes away (a pipe is closed; a terminal gets ^D).
my ($in, $lsn, $inbuf, $in_done) = ($pty // $in_w, undef, '', 0);
my %client;
if ($in) {
  my $F_SETFL = 4;
  fcntl($in, $F_SETFL, 0x800) or die "nonblocking: $!\n"; # O_NONBLOCK
  chdir($dir) or die "chdir $dir: $!\n";
  unlink('attach.sock');
  my $old = umask(0177);
  socket($lsn, 1, 1, 0) or die "socket: $!\n"; # AF_UNIX, SOCK_STREAM
  bind($lsn, pack('S a108', 1, 'attach.sock')) or die "bind attach.sock: $!\n";
  umask($old);
  listen($lsn, 8) or die "listen: $!\n";
}
# The end of input waits for the input before it to be taken.
my $in_ending = 0;
sub input_end { $in_ending = 1 }
sub input_close {
  return if $in_done || !$in_ending || $inbuf ne '';
  $in_done = 1;
  if ($pty) { syswrite($pty, "\x04") } else { close($in_w) }
}
sub client_frames {
  my ($c) = @_;
  my $st = $client{$c};
  while (length($st->{buf}) >= 5) {
    my ($type, $len) = unpack('C N', $st->{buf});
    last if length($st->{buf}) < 5 + $len;
    my $payload = substr($st->{buf}, 5, $len);
    substr($st->{buf}, 0, 5 + $len, '');
    if ($type == 0) {
      $st->{input} = 1;
      $inbuf .= $payload unless $in_done;
    } elsif ($type == 1 && $pty && $len == 4) {
      my ($cols, $rows) = unpack('n n', $payload);
      my $ws = pack('S4', $rows, $cols, 0, 0);
      ioctl($pty, 0x5414, $ws); # TIOCSWINSZ: the foreground group gets SIGWINCH
    } elsif ($type == 2) {
      input_end() if $opt{once};
    }
  }
}
sub client_gone {
  my ($c) = @_;
  my $st = delete $client{$c};
  close($st->{fh});
  input_end() if $opt{once} && $st->{input};
}

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
$open{pty} = $pty if $pty;
sub reap {
  return if defined $status || waitpid($pid, 1) != $pid;
  $status = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
  $deadline = now() + 2;
}
while (%open) {
  my ($rin, $win) = ('', '');
  vec($rin, fileno($_), 1) = 1 for values %open;
  if ($lsn && !defined $status) {
    vec($rin, fileno($lsn), 1) = 1;
    # Input waits while the command has not taken what came before.
    if (length($inbuf) < 65536) { vec($rin, fileno($_->{fh}), 1) = 1 for values %client }
    vec($win, fileno($in), 1) = 1 if $inbuf ne '' && !$in_done;
  }
  my $wait = defined $deadline ? $deadline - now() : 1;
  my $n = select(my $rout = $rin, my $wout = $win, undef, $wait > 0 ? $wait : 0);
  reap();
  last if defined $deadline && now() >= $deadline;
  next if $n <= 0;
  if ($lsn && !defined $status) {
    if (vec($rout, fileno($lsn), 1) && accept(my $c, $lsn)) {
      $client{$c} = { fh => $c, buf => '', input => 0 };
    }
    for my $st (values %client) {
      next unless vec($rout, fileno($st->{fh}), 1);
      my $got = sysread($st->{fh}, my $data, 65536);
      if (!$got) { client_gone($st->{fh}); next }
      $st->{buf} .= $data;
      client_frames($st->{fh});
    }
    if ($inbuf ne '' && !$in_done && vec($wout, fileno($in), 1)) {
      my $put = syswrite($in, $inbuf);
      substr($inbuf, 0, $put, '') if $put;
    }
    input_close();
  }
  for my $name (qw(control stdout stderr pty)) {
    my $h = $open{$name};
    next unless $h && vec($rout, fileno($h), 1);
    my $got = sysread($h, my $data, 65536);
    if (!$got) {
      delete $open{$name};
      close($h);
      flush_stream($name eq 'pty' ? 'stdout' : $name) if $name ne 'control';
    } elsif ($name eq 'control') {
      $control .= $data;
      if (!$ok && $control =~ /^ok \d+\n/) {
        $ok = 1;
        syswrite($ctl, $control);
        close($ctl);
        emit($pty ? 'stdout' : 'stderr', $early) if $early ne '';
      }
    } elsif (($name eq 'stderr' || $name eq 'pty') && !$ok) {
      $early .= $data;
    } else {
      emit($name eq 'pty' ? 'stdout' : $name, $data);
    }
  }
}
if ($lsn) {
  close($lsn);
  unlink("$dir/attach.sock");
  close($_->{fh}) for values %client;
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
