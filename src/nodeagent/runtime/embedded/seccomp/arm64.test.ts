// The seccomp compiler's arm64 output, checked instruction by instruction on
// this x86_64 host (the filter was not run on an arm64 kernel): the
// architecture check is AUDIT_ARCH_AARCH64, there is no x32 guard, arm64's
// own numbers are used, names arm64 does not have (open, stat, fork) are
// skipped, and the runtime's default profile compiles.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileProfile, nativeArchSupported, syscallNumber, SeccompCompileError } from "./bpf.js";
import { RUNTIME_DEFAULT } from "./runtime-default.js";
import { SYSCALLS_ARM64 } from "./syscalls-arm64.js";

/** [code, jt, jf, k] of each instruction. */
function insns(program: Buffer): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  for (let i = 0; i < program.length; i += 8) out.push([program.readUInt16LE(i), program.readUInt8(i + 2), program.readUInt8(i + 3), program.readUInt32LE(i + 4)]);
  return out;
}

test("arm64 table: generic numbers (read 63, openat 56, prctl 167, clone3 435), no legacy calls", () => {
  assert.ok(nativeArchSupported("arm64"));
  assert.deepEqual(["read", "write", "openat", "prctl", "clone", "execve", "mmap", "clone3", "newfstatat", "fstat"].map((n) => syscallNumber(n, "arm64")), [63, 64, 56, 167, 220, 221, 222, 435, 79, 80]);
  for (const legacy of ["open", "stat", "fork", "pipe", "select", "poll"]) assert.equal(SYSCALLS_ARM64[legacy], undefined, legacy);
  assert.ok(Object.keys(SYSCALLS_ARM64).length > 290);
});

test("arm64 filter: AUDIT_ARCH_AARCH64 check, arm64 numbers, unknown names skipped; a profile naming only x86_64 is refused", () => {
  const { program, skipped } = compileProfile({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdirat", "open", "unlinkat"], action: "SCMP_ACT_ERRNO", errnoRet: 1 }] }, "arm64");
  const p = insns(program);
  assert.deepEqual(p.slice(0, 4), [[0x20, 0, 0, 4], [0x15, 1, 0, 0xc00000b7], [0x06, 0, 0, 0x80000000], [0x20, 0, 0, 0]], "load arch, compare to AARCH64, kill otherwise, load nr");
  assert.deepEqual(p.slice(4), [[0x15, 0, 1, 34], [0x06, 0, 0, 0x00050001], [0x15, 0, 1, 35], [0x06, 0, 0, 0x00050001], [0x06, 0, 0, 0x7fff0000]], "mkdirat 34 and unlinkat 35 get EPERM, the rest is allowed; no x32 guard");
  assert.deepEqual(skipped, ["open"]);
  assert.throws(() => compileProfile({ defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64"] }, "arm64"), SeccompCompileError);
  assert.doesNotThrow(() => compileProfile({ defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"] }, "arm64"));
});

test("the runtime's default profile compiles for arm64 too", () => {
  const { program, skipped } = compileProfile(RUNTIME_DEFAULT, "arm64");
  assert.equal(insns(program)[1]![3], 0xc00000b7);
  assert.ok(!skipped.includes("unshare") && !skipped.includes("mount"), "the calls it denies exist on arm64");
});
