// The seccomp profile of a container (seed 001, "Seccomp settings"):
// Unconfined, RuntimeDefault (ours, see seccomp/runtime-default.ts) or a
// Localhost file, compiled to a BPF filter that the shim's last step
// installs. Errors carry containerd's wording, which the agent reports as
// CreateContainerError. Where no filter can be installed (no Perl, another
// architecture) the container runs unfiltered and its status says so.

import { readFileSync } from "node:fs";
import { status as Code } from "@grpc/grpc-js";
import type * as cri from "../../cri/types.js";
import { RuntimeError } from "./errors.js";
import { compileProfile, nativeArchSupported, type SeccompProfile } from "./seccomp/bpf.js";
import { PERL } from "./seccomp/loader.js";
import { RUNTIME_DEFAULT } from "./seccomp/runtime-default.js";

const fail = (why: string) => new RuntimeError(Code.UNKNOWN, `failed to generate seccomp spec opts: ${why}`);

function readLocalhost(path: string): SeccompProfile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw fail(`cannot load seccomp profile "${path}": open ${path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw fail(`decoding seccomp profile "${path}" failed: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || typeof (parsed as { defaultAction?: unknown }).defaultAction !== "string") {
    throw fail(`seccomp profile "${path}" has no defaultAction`);
  }
  return parsed as SeccompProfile;
}

/**
 * The compiled filter for a container, or undefined when it runs unconfined
 * (Unconfined, privileged, or no loader here: then `notes` says why).
 */
export function seccompFilter(security: cri.LinuxContainerSecurityContext | null, notes: string[]): Buffer | undefined {
  const profile = security?.seccomp;
  if (security?.privileged || profile == null || profile.profileType === "Unconfined") return undefined;
  const spec = profile.profileType === "Localhost" ? readLocalhost(profile.localhostRef) : RUNTIME_DEFAULT;
  const what = `seccomp profile ${profile.profileType}${profile.localhostRef ? ` (${profile.localhostRef})` : ""}`;
  let compiled;
  try {
    compiled = compileProfile(spec);
  } catch (err) {
    if (!nativeArchSupported()) {
      notes.push(`${what} is not enforced: ${(err as Error).message}`);
      return undefined;
    }
    throw fail(`${what}: ${(err as Error).message}`);
  }
  if (PERL === undefined) {
    notes.push(`${what} is not enforced: the embedded runtime installs filters with perl, which is not installed`);
    return undefined;
  }
  // Our RuntimeDefault names calls of several architectures; only a Localhost profile's gaps are worth a note.
  if (compiled.skipped.length > 0 && spec !== RUNTIME_DEFAULT) notes.push(`${what}: system calls unknown on this architecture were skipped: ${compiled.skipped.join(", ")}`);
  return compiled.program;
}

/** The runtime's SeccompEnforced condition: filters are installed where this node has a syscall table and Perl. */
export function seccompSupport(): cri.RuntimeCondition {
  if (!nativeArchSupported()) return { type: "SeccompEnforced", status: false, reason: "Unsupported", message: `no system call table for ${process.arch}: seccomp profiles are checked, not enforced` };
  if (PERL === undefined) return { type: "SeccompEnforced", status: false, reason: "NoLoader", message: "perl is not installed: seccomp profiles are checked, not enforced" };
  return { type: "SeccompEnforced", status: true, reason: "", message: "" };
}
