// The version every component reports (`orch --version`, and later /version and
// /statusz). Shaped like upstream's version.Info so upstream clients read it.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "./package-root.js";

export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
  /** "v" + the package version, e.g. "v0.1.0". */
  readonly gitVersion: string;
  readonly gitCommit: string;
  readonly gitTreeState: string;
  readonly buildDate: string;
  /** Upstream reports its Go version here; we report Node's (seed 002: "format not guaranteed"). */
  readonly goVersion: string;
  readonly compiler: string;
  readonly platform: string;
}

/**
 * The release orch's APIs and metrics behave as (the seeds describe 1.36): /statusz's
 * emulationVersion, and what metric deprecations are compared with.
 */
export const EMULATION_VERSION = "1.36";
/** The oldest release orch stays compatible with (/statusz's minimumCompatibilityVersion). */
export const MINIMUM_COMPATIBILITY_VERSION = "1.35";

let cached: VersionInfo | undefined;

export function versionInfo(): VersionInfo {
  if (cached !== undefined) return cached;
  const pkg = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version?: unknown };
  const version = typeof pkg.version === "string" ? pkg.version : "0.0.0";
  const [major = "0", minor = "0"] = version.split(".");
  cached = Object.freeze({
    major,
    minor,
    gitVersion: `v${version}`,
    // Not stamped at build time (yet): upstream leaves these empty in unstamped builds too.
    gitCommit: "",
    gitTreeState: "",
    buildDate: "",
    goVersion: `node${process.versions.node}`,
    compiler: "tsc",
    platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
  });
  return cached;
}
