// The version every component reports on /version, /statusz, build_info and
// the node's kubeletVersion. Shaped like upstream's version.Info so upstream
// clients read it. Clients compare it with their own release (kubectl's skew
// warning, e2e.test's "server version" spec, client-go's feature checks), so it
// names the Kubernetes API release orch is compatible with, with orch's own
// version as semver build metadata, as k3s does: `v1.33.0+orch.0.1.0`.
// `orch --version` prints orch's own version (orchVersion()).

import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { packageRoot } from "./package-root.js";

export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
  /** The API release, "+orch." and the package version: "v1.33.0+orch.0.1.0". */
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

/**
 * The Kubernetes API release /version reports (major.minor): the newest kubectl orch is
 * tested with (test/support/kubectl.ts runs 1.27 to 1.33), so that kubectl prints no skew
 * warning and clients that gate on the server's minor version take their current paths.
 */
export const API_COMPATIBILITY_VERSION = "1.33";

let cached: VersionInfo | undefined;
let packageVersion: string | undefined;

/** orch's own version, from package.json: "0.1.0". */
export function orchVersion(): string {
  if (packageVersion !== undefined) return packageVersion;
  const pkg = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version?: unknown };
  packageVersion = typeof pkg.version === "string" ? pkg.version : "0.0.0";
  return packageVersion;
}

export function versionInfo(): VersionInfo {
  if (cached !== undefined) return cached;
  const [major = "1", minor = "0"] = API_COMPATIBILITY_VERSION.split(".");
  cached = Object.freeze({
    major,
    minor,
    // Semver build metadata allows only [0-9A-Za-z-] in dot-separated parts.
    gitVersion: `v${major}.${minor}.0+orch.${orchVersion().replace(/[^0-9A-Za-z.-]/g, "-")}`,
    // The checkout's commit when orch runs from one (kubectl version prints it; a conformance spec wants hex);
    // an installed package has none, as upstream's unstamped builds. Tree state and build date are not stamped.
    gitCommit: gitCommitOf(packageRoot()),
    gitTreeState: "",
    buildDate: "",
    goVersion: `node${process.versions.node}`,
    compiler: "tsc",
    platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
  });
  return cached;
}

const HASH = /^[0-9a-f]{40}$/;

/**
 * The commit checked out at `root` (its .git directory, or the `gitdir:` file
 * of a worktree), read from the files git keeps: HEAD, then the branch it
 * names, loose or packed (a worktree's branches live in its common dir). ""
 * when `root` is no checkout or a file cannot be read.
 */
export function gitCommitOf(root: string): string {
  try {
    let gitDir = join(root, ".git");
    if (statSync(gitDir).isFile()) gitDir = resolve(root, readFileSync(gitDir, "utf8").trim().replace(/^gitdir:\s*/, ""));
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    if (HASH.test(head)) return head; // detached
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (ref === undefined) return "";
    const commonFile = join(gitDir, "commondir");
    const common = existsSync(commonFile) ? resolve(gitDir, readFileSync(commonFile, "utf8").trim()) : gitDir;
    for (const dir of [gitDir, common]) {
      const loose = join(dir, ref);
      if (existsSync(loose)) {
        const hash = readFileSync(loose, "utf8").trim();
        return HASH.test(hash) ? hash : "";
      }
    }
    const packed = existsSync(join(common, "packed-refs")) ? readFileSync(join(common, "packed-refs"), "utf8") : "";
    const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
    const hash = line?.split(" ")[0] ?? "";
    return HASH.test(hash) ? hash : "";
  } catch {
    return "";
  }
}
