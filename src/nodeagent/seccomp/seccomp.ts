// Seccomp profiles (seed 001, "Seccomp settings"): the container's profile
// overrides the pod's; privileged containers are always Unconfined; Localhost
// names a JSON file under <root>/seccomp, checked against the runtime spec's
// fields and actions before the runtime sees it. A missing or bad file makes
// the container wait with reason CreateContainerError.

import { readFileSync } from "node:fs";
import { isAbsolute, join, normalize } from "node:path";
import type { Container, Pod } from "../../api/core/types.js";
import type { SecurityProfile } from "../cri/index.js";

export const SECCOMP_ACTIONS = [
  "SCMP_ACT_ERRNO", "SCMP_ACT_ALLOW", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL",
  "SCMP_ACT_TRAP", "SCMP_ACT_NOTIFY", "SCMP_ACT_TRACE", "SCMP_ACT_LOG",
];

export class SeccompError extends Error {
  readonly reason = "CreateContainerError";
}

interface SeccompProfileField {
  type?: string;
  localhostProfile?: string;
}

export interface SeccompOptions {
  /** <root-dir>/seccomp */
  profileRoot: string;
  /** With the agent's seccompDefault on, an unset profile means RuntimeDefault (upstream default: Unconfined). */
  seccompDefault?: boolean;
}

/** The container's effective profile for the CRI, or a SeccompError. */
export function containerSeccomp(pod: Pod, container: Container, options: SeccompOptions): SecurityProfile {
  const sc = (container.securityContext ?? {}) as { privileged?: boolean; seccompProfile?: SeccompProfileField };
  if (sc.privileged === true) return { profileType: "Unconfined", localhostRef: "" };
  const podProfile = (pod.spec?.securityContext as { seccompProfile?: SeccompProfileField } | undefined)?.seccompProfile;
  return resolveProfile(sc.seccompProfile ?? podProfile, options, `container "${container.name}"`);
}

/** The pod-level profile for the sandbox. */
export function podSeccomp(pod: Pod, options: SeccompOptions): SecurityProfile {
  return resolveProfile((pod.spec?.securityContext as { seccompProfile?: SeccompProfileField } | undefined)?.seccompProfile, options, `pod "${pod.metadata.name}"`);
}

function resolveProfile(profile: SeccompProfileField | undefined, options: SeccompOptions, who: string): SecurityProfile {
  const type = profile?.type ?? (options.seccompDefault ? "RuntimeDefault" : "Unconfined");
  if (type === "Unconfined" || type === "RuntimeDefault") return { profileType: type, localhostRef: "" };
  if (type !== "Localhost") throw new SeccompError(`failed to generate security options for ${who}: unknown seccomp profile type ${JSON.stringify(type)}`);
  const name = profile?.localhostProfile ?? "";
  if (!name || isAbsolute(name) || normalize(name).startsWith("..")) {
    throw new SeccompError(`failed to generate security options for ${who}: localhostProfile must be a relative path under ${options.profileRoot}, got ${JSON.stringify(name)}`);
  }
  const path = join(options.profileRoot, name);
  checkProfileFile(path, who);
  return { profileType: "Localhost", localhostRef: path };
}

/** Reads a Localhost profile and checks it as the runtime spec's LinuxSeccomp. */
export function checkProfileFile(path: string, who = "container"): void {
  const fail = (why: string): never => {
    throw new SeccompError(`failed to generate security options for ${who}: seccomp profile ${path}: ${why}`);
  };
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return fail(e.code === "ENOENT" ? "no such file or directory" : e instanceof SyntaxError ? `not valid JSON: ${e.message}` : e.message);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return fail("must be a JSON object");
  const p = doc as Record<string, unknown>;
  const action = (v: unknown, field: string) => {
    if (typeof v !== "string" || !SECCOMP_ACTIONS.includes(v)) fail(`${field}: unknown action ${JSON.stringify(v)}`);
  };
  const int = (v: unknown, field: string) => {
    if (v !== undefined && !(typeof v === "number" && Number.isInteger(v) && v >= 0)) fail(`${field} must be a non-negative integer`);
  };
  const strings = (v: unknown, field: string) => {
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.every((s) => typeof s === "string"))) fail(`${field} must be a list of strings`);
  };
  action(p["defaultAction"], "defaultAction");
  int(p["defaultErrnoRet"], "defaultErrnoRet");
  strings(p["architectures"], "architectures");
  strings(p["flags"], "flags");
  const syscalls = p["syscalls"] ?? [];
  if (!Array.isArray(syscalls)) return fail("syscalls must be a list");
  syscalls.forEach((s: unknown, i) => {
    const field = `syscalls[${i}]`;
    if (typeof s !== "object" || s === null) return fail(`${field} must be an object`);
    const sc = s as Record<string, unknown>;
    if (!Array.isArray(sc["names"]) || sc["names"].length === 0 || !sc["names"].every((n) => typeof n === "string")) fail(`${field}.names must be a non-empty list of strings`);
    action(sc["action"], `${field}.action`);
    int(sc["errnoRet"], `${field}.errnoRet`);
    if (sc["args"] !== undefined && sc["args"] !== null && !Array.isArray(sc["args"])) fail(`${field}.args must be a list`);
  });
}
