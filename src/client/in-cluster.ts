// In-cluster configuration: a program running in a pod reaches the API server
// through the `kubernetes` service (KUBERNETES_SERVICE_HOST and _PORT, as the
// node agent's service environment names it on every profile) with the pod's
// projected service-account files: token, ca.crt and namespace under
// /var/run/secrets/<key domain>/serviceaccount (upstream's rest.InClusterConfig).
// The token is short-lived and renewed by the node agent: the REST client
// reads the token file again when it has been replaced (tokenSource).

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ClientConfig } from "./kubeconfig.js";

/** Where every pod's service-account files sit, one folder per key domain. */
export const SERVICE_ACCOUNT_SECRETS_DIR = "/var/run/secrets";

export interface InClusterOptions {
  /** The profile's key domain ("orch.io", "kubernetes.io"); default: the one folder under /var/run/secrets that has a token. */
  readonly keyDomain?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Instead of /var/run/secrets (tests). */
  readonly secretsDir?: string;
}

/** Upstream's ErrNotInCluster text, for a program not running in a pod. */
export const NOT_IN_CLUSTER = "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined";

export function inClusterConfig(options: InClusterOptions = {}): ClientConfig & { namespace: string } {
  const env = options.env ?? process.env;
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (!host || !port) throw new Error(NOT_IN_CLUSTER);
  const dir = serviceAccountDir(options);
  const tokenFile = join(dir, "token");
  let token: string;
  let ca: string;
  try {
    token = readFileSync(tokenFile, "utf8").trim();
    ca = readFileSync(join(dir, "ca.crt"), "utf8");
  } catch (err) {
    throw new Error(`unable to load in-cluster configuration: ${(err as Error).message}`, { cause: err });
  }
  const namespace = existsSync(join(dir, "namespace")) ? readFileSync(join(dir, "namespace"), "utf8").trim() : "default";
  return { server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`, ca, token, tokenFile, namespace };
}

function serviceAccountDir(options: InClusterOptions): string {
  const root = options.secretsDir ?? SERVICE_ACCOUNT_SECRETS_DIR;
  if (options.keyDomain !== undefined) return join(root, options.keyDomain, "serviceaccount");
  const found = existsSync(root) ? readdirSync(root).map((d) => join(root, d, "serviceaccount")).filter((d) => existsSync(join(d, "token"))) : [];
  if (found.length === 0) throw new Error(`unable to load in-cluster configuration: no service-account token under ${root}/*/serviceaccount`);
  return found[0]!;
}

/**
 * The bearer token of a config with a token file: read again when the file
 * was replaced (the node agent renames a new token over the old one), checked
 * at most once a second; the last token read stands while the file cannot be read.
 */
export function tokenSource(config: Pick<ClientConfig, "token" | "tokenFile">, now: () => number = Date.now): () => string | undefined {
  const file = config.tokenFile;
  if (file === undefined || file === "") return () => config.token;
  let token = config.token;
  let seen = "";
  let checkedAt = -Infinity;
  return () => {
    const t = now();
    if (t - checkedAt < 1000) return token;
    checkedAt = t;
    try {
      const s = statSync(file);
      const stamp = `${s.ino}:${s.mtimeMs}:${s.size}`;
      if (stamp !== seen) {
        token = readFileSync(file, "utf8").trim();
        seen = stamp;
      }
    } catch {
      // Keep the last token: the file may be between two versions.
    }
    return token;
  };
}
