// Kubeconfig files: pick the context (the current one unless told), and turn
// its cluster and user into what the REST client needs to connect. Inline
// `*-data` fields and file paths (relative to the kubeconfig) both work, as
// upstream's clientcmd; exec plugins and auth providers are not supported.

import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse } from "yaml";

/** Everything the REST client needs to reach and authenticate to one API server. */
export interface ClientConfig {
  /** Base URL: `https://127.0.0.1:6443`. */
  server: string;
  /** PEM CA bundle the server's certificate must chain to; system roots when absent. */
  ca?: string;
  /** PEM client certificate and key (client-certificate authentication). */
  cert?: string;
  key?: string;
  /** Bearer token. */
  token?: string;
  /** A file holding the bearer token, read again when it is replaced (in-cluster.ts#tokenSource); `token` is its first content. */
  tokenFile?: string;
  /** Accept any server certificate (kubeconfig `insecure-skip-tls-verify`). */
  insecureSkipTlsVerify?: boolean;
  /** Name to verify the server's certificate against instead of the URL's host. */
  tlsServerName?: string;
}

export interface LoadKubeconfigOptions {
  /** Use this context instead of `current-context`. */
  context?: string;
}

/** Reads and resolves a kubeconfig file; errors name the file and what is missing. */
export function loadKubeconfig(path: string, options: LoadKubeconfigOptions = {}): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseKubeconfig(text, { ...options, baseDir: dirname(resolve(path)), source: path });
}

export interface ParseKubeconfigOptions extends LoadKubeconfigOptions {
  /** Where relative file paths in the kubeconfig point from (default: the working directory). */
  baseDir?: string;
  /** How errors name the input (default "kubeconfig"). */
  source?: string;
}

interface Named<T> {
  name?: string;
  cluster?: T;
  user?: T;
  context?: T;
}

interface RawCluster {
  server?: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
}

interface RawUser {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  exec?: unknown;
  "auth-provider"?: unknown;
}

interface RawContext {
  cluster?: string;
  user?: string;
}

interface RawConfig {
  clusters?: Named<RawCluster>[];
  users?: Named<RawUser>[];
  contexts?: Named<RawContext>[];
  "current-context"?: string;
}

export function parseKubeconfig(text: string, options: ParseKubeconfigOptions = {}): ClientConfig {
  const source = options.source ?? "kubeconfig";
  const fail = (message: string): never => {
    throw new Error(`${source}: ${message}`);
  };
  let raw: RawConfig;
  try {
    raw = (parse(text) ?? {}) as RawConfig;
  } catch (err) {
    return fail(`not valid YAML: ${(err as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return fail("not a kubeconfig (expected a mapping)");
  const baseDir = options.baseDir ?? process.cwd();
  const file = (p: string) => readFileSync(isAbsolute(p) ? p : resolve(baseDir, p), "utf8");

  const contextName = options.context ?? raw["current-context"];
  if (!contextName) return fail("no current-context is set and no context was given");
  const context = find(raw.contexts, contextName, "context") ?? fail(`context ${JSON.stringify(contextName)} not found`);
  const clusterName = context.cluster ?? fail(`context ${JSON.stringify(contextName)} names no cluster`);
  const cluster = find(raw.clusters, clusterName, "cluster") ?? fail(`cluster ${JSON.stringify(clusterName)} not found`);
  const user: RawUser = context.user ? find(raw.users, context.user, "user") ?? fail(`user ${JSON.stringify(context.user)} not found`) : {};
  if (user.exec !== undefined || user["auth-provider"] !== undefined) {
    fail(`user ${JSON.stringify(context.user)}: exec plugins and auth providers are not supported; use a token or a client certificate`);
  }
  if (!cluster.server) return fail(`cluster ${JSON.stringify(clusterName)} has no server`);

  const config: ClientConfig = { server: cluster.server.replace(/\/+$/, "") };
  const ca = pem(cluster["certificate-authority-data"], cluster["certificate-authority"], file);
  if (ca !== undefined) config.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) config.insecureSkipTlsVerify = true;
  if (cluster["tls-server-name"]) config.tlsServerName = cluster["tls-server-name"];
  const cert = pem(user["client-certificate-data"], user["client-certificate"], file);
  const key = pem(user["client-key-data"], user["client-key"], file);
  if ((cert === undefined) !== (key === undefined)) fail(`user ${JSON.stringify(context.user)}: a client certificate needs its key, and a key its certificate`);
  if (cert !== undefined) config.cert = cert;
  if (key !== undefined) config.key = key;
  const token = user.token ?? (user.tokenFile ? file(user.tokenFile).trim() : undefined);
  if (token) config.token = token;
  if (user.token === undefined && user.tokenFile) config.tokenFile = isAbsolute(user.tokenFile) ? user.tokenFile : resolve(baseDir, user.tokenFile);
  return config;
}

function find<T>(list: Named<T>[] | undefined, name: string, field: "cluster" | "user" | "context"): T | undefined {
  const entry = (list ?? []).find((e) => e?.name === name);
  return entry === undefined ? undefined : ((entry[field] ?? {}) as T);
}

/** Inline base64 data wins over a file path, as in upstream's clientcmd. */
function pem(data: string | undefined, path: string | undefined, file: (p: string) => string): string | undefined {
  if (data) return Buffer.from(data, "base64").toString("utf8");
  if (path) return file(path);
  return undefined;
}
