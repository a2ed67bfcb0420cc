// Compiled seccomp profiles enforced by the real kernel: each case runs a
// shell under the Perl loader with a filter and checks what the kernel let
// through (needs x86_64 and Perl; both are there on the CI machines).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileProfile, nativeArchSupported, SeccompCompileError, type SeccompProfile } from "./bpf.js";
import { loaderArgv, PERL } from "./loader.js";
import { SYSCALLS_X86_64 } from "./syscalls-x86_64.js";

const skip = !nativeArchSupported() ? `no syscall table for ${process.arch}` : PERL === undefined ? (process.env["CI"] ? undefined : "perl is not installed") : undefined;

function run(profile: SeccompProfile, script: string, user: { uid?: number; gid?: number; noNewPrivs?: boolean } = {}): { code: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), "seccomp-test-"));
  try {
    const filterFile = join(dir, "filter.bpf");
    writeFileSync(filterFile, compileProfile(profile).program);
    const argv = loaderArgv({ prctl: SYSCALLS_X86_64["prctl"]!, filterFile, root: "/", workingDir: dir, noNewPrivs: user.noNewPrivs ?? false, argv: ["/bin/sh", "-c", script], ...user })!;
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8" });
    return { code: r.status ?? 128 + 31, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
}

const deny = (names: string[], extra: Partial<SeccompProfile["syscalls"] extends (infer R)[] | null | undefined ? R : never> = {}): SeccompProfile => ({
  defaultAction: "SCMP_ACT_ALLOW",
  syscalls: [{ names, action: "SCMP_ACT_ERRNO", ...extra }],
});

test("seccomp: a denied syscall fails with EPERM (or the profile's errnoRet), others run", { skip }, () => {
  assert.deepEqual(run(deny(["mkdir", "mkdirat"]), "mkdir d 2>&1 | grep -o 'Operation not permitted'; echo still here"), { code: 0, out: "Operation not permitted\nstill here\n" });
  assert.match(run(deny(["mkdir", "mkdirat"], { errnoRet: 13 }), "mkdir d").out, /Permission denied/);
  assert.match(run({ defaultAction: "SCMP_ACT_ALLOW", defaultErrnoRet: 30, syscalls: [{ names: ["mkdirat", "mkdir"], action: "SCMP_ACT_ERRNO" }] }, "mkdir d").out, /Read-only file system/);
  assert.deepEqual(run(deny(["mkdir"]), "echo fine"), { code: 0, out: "fine\n" }, "a filter that does not touch the script's calls changes nothing");
});

test("seccomp: SCMP_ACT_KILL_PROCESS ends the caller with SIGSYS", { skip }, () => {
  const r = run({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdir", "mkdirat"], action: "SCMP_ACT_KILL_PROCESS" }] }, "mkdir d; echo exit=$?");
  assert.deepEqual(r.out.trim().split("\n").sort(), ["Bad system call", "exit=159"], "the mkdir child died of signal 31 (and the shell says so)");
});

test("seccomp: argument conditions (EQ, NE, GT, GE, LT, LE, MASKED_EQ) on kill's signal number", { skip }, () => {
  // dash's kill builtin calls kill(2): args[1] is the signal. SIGCHLD (17) and SIGCONT (18) are harmless to send to oneself.
  const outcome = (op: string, value: number, valueTwo?: number) => {
    const profile = deny(["kill"], { args: [{ index: 1, op, value, ...(valueTwo !== undefined ? { valueTwo } : {}) }] });
    const sent = (sig: string) => run(profile, `kill -${sig} $$ 2>/dev/null && echo yes || echo no`).out.trim();
    return [sent("0"), sent("CHLD"), sent("CONT")].join(" ");
  };
  assert.equal(outcome("SCMP_CMP_EQ", 0), "no yes yes");
  assert.equal(outcome("SCMP_CMP_NE", 0), "yes no no");
  assert.equal(outcome("SCMP_CMP_GT", 17), "yes yes no");
  assert.equal(outcome("SCMP_CMP_GE", 17), "yes no no");
  assert.equal(outcome("SCMP_CMP_LT", 17), "no yes yes");
  assert.equal(outcome("SCMP_CMP_LE", 17), "no no yes");
  assert.equal(outcome("SCMP_CMP_MASKED_EQ", 0x1f, 17), "yes no yes");
  // A 64-bit value whose low word matches: the high word decides.
  assert.equal(outcome("SCMP_CMP_EQ", 2 ** 32 + 17), "yes yes yes");
});

test("seccomp: the loader drops to the container's user after the filter, with or without no_new_privs", { skip: skip ?? (process.getuid?.() !== 0 ? "needs root to change user" : undefined) }, () => {
  assert.deepEqual(run(deny(["mkdir", "mkdirat"]), "id -u; id -g", { uid: 65534, gid: 65534 }), { code: 0, out: "65534\n65534\n" });
  assert.deepEqual(run(deny(["mkdir", "mkdirat"]), "id -u; grep NoNewPrivs /proc/self/status", { uid: 65534, gid: 65534, noNewPrivs: true }), { code: 0, out: "65534\nNoNewPrivs:\t1\n" });
  assert.match(run(deny(["mkdir"]), "grep NoNewPrivs /proc/self/status").out, /NoNewPrivs:\t0/, "privilege escalation stays allowed by default, as upstream");
});

test("seccomp: compile errors and skipped names", () => {
  const { skipped, program } = compileProfile({ defaultAction: "SCMP_ACT_ERRNO", syscalls: [{ names: ["read", "no_such_call"], action: "SCMP_ACT_ALLOW" }] }, "x64");
  assert.deepEqual(skipped, ["no_such_call"]);
  assert.equal(program.length % 8, 0);
  assert.throws(() => compileProfile({ defaultAction: "SCMP_ACT_NOTIFY" }, "x64"), SeccompCompileError);
  assert.throws(() => compileProfile({ defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_AARCH64"] }, "x64"), /does not list this node's architecture SCMP_ARCH_X86_64/);
  assert.throws(() => compileProfile({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["kill"], action: "SCMP_ACT_ERRNO", args: [{ index: 6, value: 0, op: "SCMP_CMP_EQ" }] }] }, "x64"), /index 6 is out of range/);
  assert.throws(() => compileProfile({ defaultAction: "SCMP_ACT_ALLOW" }, "riscv64"), /not compiled for architecture riscv64/);
});
