// The seccomp check the embedded runtime can make without a seccomp loader
// (seed 001, "Seccomp settings"): a Localhost profile must exist and be a
// profile; errors carry containerd's wording, which the agent reports as
// CreateContainerError. Profiles are not enforced; the caller notes it.

import { readFileSync } from "node:fs";
import { status as Code } from "@grpc/grpc-js";
import type * as cri from "../../cri/types.js";
import { RuntimeError } from "./errors.js";

/** The seccomp check the runtime can make: a Localhost profile must exist and be a profile (seed 001, "Seccomp settings"). */
export function checkSeccomp(security: cri.LinuxContainerSecurityContext | null, notes: string[]): void {
  const profile = security?.seccomp;
  if (security?.privileged || profile == null || profile.profileType === "Unconfined") return;
  if (profile.profileType === "Localhost") {
    const path = profile.localhostRef;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw new RuntimeError(Code.UNKNOWN, `failed to generate seccomp spec opts: cannot load seccomp profile "${path}": open ${path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new RuntimeError(Code.UNKNOWN, `failed to generate seccomp spec opts: decoding seccomp profile "${path}" failed: ${(err as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || typeof (parsed as { defaultAction?: unknown }).defaultAction !== "string") {
      throw new RuntimeError(Code.UNKNOWN, `failed to generate seccomp spec opts: seccomp profile "${path}" has no defaultAction`);
    }
  }
  notes.push(`seccomp profile ${profile.profileType}${profile.localhostRef ? ` (${profile.localhostRef})` : ""} is not enforced by the embedded runtime`);
}

