// A component's self-signed serving pair kept in a directory (the node agent's
// --cert-dir, seed 001 "Local files"): <dir>/<name>.crt and <name>.key are
// written on the first start (key 0600) and served unchanged on later starts.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selfSignedServingCert } from "./pki.js";

export interface CertDirOptions {
  /** Created (0700) when missing. */
  readonly dir: string;
  /** File base name: "nodeagent" gives nodeagent.crt and nodeagent.key. */
  readonly name: string;
}

/** The pair in `dir`, or a new self-signed one for `names` written there first. */
export async function persistedServingCert(options: CertDirOptions, names: string[]): Promise<{ cert: string; key: string }> {
  const certFile = join(options.dir, `${options.name}.crt`);
  const keyFile = join(options.dir, `${options.name}.key`);
  // Both or neither: a lone file (an interrupted first start) is replaced rather than paired with a stranger.
  if (existsSync(certFile) && existsSync(keyFile)) return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const made = await selfSignedServingCert(names);
  // The key first and alone readable by us, so a reader never finds a certificate without its key.
  writeFileSync(keyFile, made.key, { mode: 0o600 });
  writeFileSync(certFile, made.cert, { mode: 0o644 });
  return { cert: made.cert, key: made.key };
}
