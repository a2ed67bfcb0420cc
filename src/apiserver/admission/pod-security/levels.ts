// Pod Security levels and versions (upstream's pod-security-admission API):
// a level is privileged < baseline < restricted, a version is "latest" or
// "v1.N"; a namespace chooses one per mode with the labels
// pod-security.<key domain>/{enforce,audit,warn}[-version]. A label that does
// not parse evaluates as restricted:latest for enforce (fail closed) and as
// privileged for audit and warn (fail open), as upstream.

import { field, type FieldError } from "../../../machinery/index.js";

export const LEVELS = ["privileged", "baseline", "restricted"] as const;
export type Level = (typeof LEVELS)[number];

/** The newest policy version this server knows: "latest" evaluates as it, and newer versions do too. */
export const LATEST_MINOR = 33;

export interface LevelVersion {
  readonly level: Level;
  /** The minor version of v1 the checks are taken at (LATEST_MINOR for "latest"). */
  readonly minor: number;
  readonly latest: boolean;
}

export interface Policy {
  readonly enforce: LevelVersion;
  readonly audit: LevelVersion;
  readonly warn: LevelVersion;
}

export const MODES = ["enforce", "audit", "warn"] as const;
export type Mode = (typeof MODES)[number];

export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${lv.latest ? "latest" : `v1.${lv.minor}`}`;
}

export function levelRank(level: Level): number {
  return LEVELS.indexOf(level);
}

export function parseLevel(value: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(value) ? (value as Level) : undefined;
}

/** "latest" or "v1.N" (N without leading zeros); undefined when it is neither. */
export function parseVersion(value: string): { minor: number; latest: boolean } | undefined {
  if (value === "latest") return { minor: LATEST_MINOR, latest: true };
  const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(value);
  if (m === null) return undefined;
  const minor = Number(m[1]);
  return minor >= LATEST_MINOR ? { minor: LATEST_MINOR, latest: false } : { minor, latest: false };
}

/** The label keys of the profile's key domain (pod-security.kubernetes.io/... on the k8s.io profile). */
export function policyLabels(keyDomain: string): Record<Mode, { level: string; version: string }> {
  const p = `pod-security.${keyDomain}/`;
  return {
    enforce: { level: `${p}enforce`, version: `${p}enforce-version` },
    audit: { level: `${p}audit`, version: `${p}audit-version` },
    warn: { level: `${p}warn`, version: `${p}warn-version` },
  };
}

/** The namespace's policy from its labels over the cluster defaults, and the label errors (for namespace validation). */
export function policyOf(labels: Readonly<Record<string, string>> | undefined, defaults: Policy, keyDomain: string): { policy: Policy; errors: FieldError[] } {
  const keys = policyLabels(keyDomain);
  const errors: FieldError[] = [];
  const resolve = (mode: Mode): LevelVersion => {
    let { level, minor, latest } = defaults[mode];
    const levelValue = labels?.[keys[mode].level];
    if (levelValue !== undefined) {
      const parsed = parseLevel(levelValue);
      if (parsed === undefined) {
        errors.push(field.invalid(`metadata.labels[${keys[mode].level}]`, levelValue, `must be one of ${LEVELS.join(", ")}`));
        level = mode === "enforce" ? "restricted" : "privileged";
      } else level = parsed;
    }
    const versionValue = labels?.[keys[mode].version];
    if (versionValue !== undefined) {
      const parsed = parseVersion(versionValue);
      if (parsed === undefined) {
        errors.push(field.invalid(`metadata.labels[${keys[mode].version}]`, versionValue, `must be "latest" or "v1.x"`));
        ({ minor, latest } = { minor: LATEST_MINOR, latest: true });
      } else ({ minor, latest } = parsed);
    }
    return { level, minor, latest };
  };
  return { policy: { enforce: resolve("enforce"), audit: resolve("audit"), warn: resolve("warn") }, errors };
}
