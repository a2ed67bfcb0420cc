// Compiles a seccomp profile (the runtime spec's LinuxSeccomp JSON: the
// format of Localhost profiles, seed 001 "Seccomp settings") into a classic
// BPF program for SECCOMP_MODE_FILTER. The program checks the architecture,
// then tries each rule in order (syscall number, then its argument
// conditions) and returns the first match's action, else the default action.

import { SYSCALLS_ARM64 } from "./syscalls-arm64.js";
import { SYSCALLS_X86_64 } from "./syscalls-x86_64.js";

export interface SeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

export interface SeccompRule {
  names?: string[];
  action: string;
  errnoRet?: number;
  args?: SeccompArg[] | null;
}

export interface SeccompProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures?: string[] | null;
  syscalls?: SeccompRule[] | null;
}

/** A compiled filter and what could not be expressed (skipped syscall names). */
export interface CompiledFilter {
  program: Buffer;
  skipped: string[];
}

export class SeccompCompileError extends Error {}

// Classic BPF opcodes (linux/filter.h) and the seccomp_data layout (linux/seccomp.h).
const LD_ABS = 0x20, JEQ = 0x15, JGT = 0x25, JGE = 0x35, RET = 0x06, AND = 0x54;
const NR = 0, ARCH = 4;
const argLow = (i: number) => 16 + 8 * i;
const argHigh = (i: number) => 20 + 8 * i; // little-endian: the high word follows
const EPERM = 1;

/** The native architectures this compiler has a syscall table for: AUDIT_ARCH value and the runtime spec's name. */
const ARCHES: Record<string, { audit: number; spec: string; table: Readonly<Record<string, number>>; x32Bit?: number }> = {
  x64: { audit: 0xc000003e, spec: "SCMP_ARCH_X86_64", table: SYSCALLS_X86_64, x32Bit: 0x40000000 },
  // AUDIT_ARCH_AARCH64 (EM_AARCH64 | 64-bit | little-endian); no x32-like ABI shares it.
  arm64: { audit: 0xc00000b7, spec: "SCMP_ARCH_AARCH64", table: SYSCALLS_ARM64 },
};

/** A system call's number on this node's architecture (undefined when unknown). */
export function syscallNumber(name: string, arch: string = process.arch): number | undefined {
  return ARCHES[arch]?.table[name];
}

export function nativeArchSupported(arch: string = process.arch): boolean {
  return arch in ARCHES;
}

/** The SECCOMP_RET_* value of an action of the runtime spec. */
export function actionValue(action: string, errnoRet: number | undefined, defaultErrnoRet: number | undefined): number {
  switch (action) {
    case "SCMP_ACT_ALLOW": return 0x7fff0000;
    case "SCMP_ACT_LOG": return 0x7ffc0000;
    case "SCMP_ACT_ERRNO": return (0x00050000 | ((errnoRet ?? defaultErrnoRet ?? EPERM) & 0xffff)) >>> 0;
    case "SCMP_ACT_TRACE": return (0x7ff00000 | ((errnoRet ?? defaultErrnoRet ?? EPERM) & 0xffff)) >>> 0;
    case "SCMP_ACT_TRAP": return 0x00030000;
    case "SCMP_ACT_KILL":
    case "SCMP_ACT_KILL_THREAD": return 0x00000000;
    case "SCMP_ACT_KILL_PROCESS": return 0x80000000;
    default: throw new SeccompCompileError(`seccomp action ${JSON.stringify(action)} is not supported by the embedded runtime`);
  }
}

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * The instructions testing one argument condition. On a match they fall
 * through past their end; on a mismatch they jump to `fail` instructions
 * after their end. (cBPF jump offsets count from the next instruction: from
 * position p of an n-long block, the failure target is n + fail - p - 1.)
 */
function condition(arg: SeccompArg): (fail: number) => Insn[] {
  const { index, op } = arg;
  if (!Number.isInteger(index) || index < 0 || index > 5) throw new SeccompCompileError(`seccomp argument index ${index} is out of range 0..5`);
  const split = (v: number) => {
    const big = BigInt.asUintN(64, BigInt(v));
    return [Number(big >> 32n), Number(big & 0xffffffffn)] as const;
  };
  const [hi, lo] = split(arg.value);
  const ldHi: Insn = [LD_ABS, 0, 0, argHigh(index)];
  const ldLo: Insn = [LD_ABS, 0, 0, argLow(index)];
  switch (op) {
    case "SCMP_CMP_EQ":
      // hi == HI && lo == LO
      return (fail) => [ldHi, [JEQ, 0, 2 + fail, hi], ldLo, [JEQ, 0, fail, lo]];
    case "SCMP_CMP_NE":
      // !(hi == HI && lo == LO)
      return (fail) => [ldHi, [JEQ, 0, 2, hi], ldLo, [JEQ, fail, 0, lo]];
    case "SCMP_CMP_MASKED_EQ": {
      const [vhi, vlo] = split(arg.valueTwo ?? 0);
      return (fail) => [ldHi, [AND, 0, 0, hi], [JEQ, 0, 3 + fail, vhi], ldLo, [AND, 0, 0, lo], [JEQ, 0, fail, vlo]];
    }
    case "SCMP_CMP_GT":
    case "SCMP_CMP_GE":
    case "SCMP_CMP_LT":
    case "SCMP_CMP_LE": {
      // Unsigned 64-bit order: the high words decide unless equal, then the low words.
      const greater = op === "SCMP_CMP_GT" || op === "SCMP_CMP_GE";
      const orEqual = op === "SCMP_CMP_GE" || op === "SCMP_CMP_LE";
      const low: Insn = greater ? [orEqual ? JGE : JGT, 0, 0, lo] : [orEqual ? JGT : JGE, 0, 0, lo];
      return (fail) => {
        // After ldHi: hi > HI → (greater ? match : fail); hi == HI → compare lo; else (greater ? fail : match)
        const lowInsn: Insn = greater ? [low[0], 0, fail, lo] : [low[0], fail, 0, lo];
        return [
          ldHi,
          [JGT, greater ? 3 : 3 + fail, 0, hi], // hi > HI: greater → the block's end (match); else → fail
          [JEQ, 0, greater ? 2 + fail : 2, hi], // hi < HI: greater → fail; else → the block's end (match)
          ldLo,
          lowInsn,
        ];
      };
    }
    default:
      throw new SeccompCompileError(`seccomp operator ${JSON.stringify(op)} is not supported`);
  }
}

export function compileProfile(profile: SeccompProfile, arch: string = process.arch): CompiledFilter {
  const native = ARCHES[arch];
  if (native === undefined) throw new SeccompCompileError(`seccomp filters are not compiled for architecture ${arch}`);
  if (typeof profile.defaultAction !== "string") throw new SeccompCompileError("seccomp profile has no defaultAction");
  const archList = profile.architectures ?? [];
  if (archList.length > 0 && !archList.includes(native.spec)) throw new SeccompCompileError(`seccomp profile does not list this node's architecture ${native.spec}`);
  const fallback = actionValue(profile.defaultAction, undefined, profile.defaultErrnoRet);
  const skipped: string[] = [];
  const body: Insn[] = [];
  for (const rule of profile.syscalls ?? []) {
    const ret = actionValue(rule.action, rule.errnoRet, profile.defaultErrnoRet);
    const conds = (rule.args ?? []).map(condition);
    for (const name of rule.names ?? []) {
      const nr = native.table[name];
      if (nr === undefined) {
        skipped.push(name);
        continue;
      }
      if (conds.length === 0) {
        body.push([JEQ, 0, 1, nr], [RET, 0, 0, ret]);
        continue;
      }
      // Block: [nr test] [conditions...] [ret] [reload nr]. Every failure lands on the reload.
      const parts: Insn[][] = [];
      let after = 1; // instructions between a condition's end and the reload: the ret
      for (let i = conds.length - 1; i >= 0; i--) {
        const insns = conds[i]!(after);
        parts.unshift(insns);
        after += insns.length;
      }
      const inner = parts.flat();
      if (inner.length + 1 > 255) throw new SeccompCompileError(`seccomp rule for ${name} has too many argument conditions`);
      body.push([JEQ, 0, inner.length + 2, nr], ...inner, [RET, 0, 0, ret], [LD_ABS, 0, 0, NR]);
    }
  }
  const head: Insn[] = [
    [LD_ABS, 0, 0, ARCH],
    [JEQ, 1, 0, native.audit],
    [RET, 0, 0, 0x80000000], // another architecture's calling convention: kill, as runc does for unlisted ones
    [LD_ABS, 0, 0, NR],
  ];
  // x32 system calls share the architecture value; treat them as unknown (the default action).
  if (native.x32Bit !== undefined) head.push([JGE, 0, 1, native.x32Bit], [RET, 0, 0, fallback]);
  const insns = [...head, ...body, [RET, 0, 0, fallback] as Insn];
  if (insns.length > 4096) throw new SeccompCompileError(`seccomp profile compiles to ${insns.length} instructions (the kernel allows 4096)`);
  const program = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    program.writeUInt16LE(code, i * 8);
    program.writeUInt8(jt, i * 8 + 2);
    program.writeUInt8(jf, i * 8 + 3);
    program.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return { program, skipped };
}
