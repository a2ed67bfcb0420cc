// The registries file: mirrors and per-host credentials and TLS settings for
// image pulls, in the shape k3s users write (/etc/rancher/k3s/registries.yaml):
//
//   mirrors:
//     docker.io:
//       endpoint: ["http://127.0.0.1:5000", "https://mirror.example"]
//       rewrite: {"^library/(.*)": "mirrored/$1"}
//   configs:
//     mirror.example:
//       auth: {username: u, password: p}     # or auth: base64(u:p), identity_token
//       tls: {ca_file: /etc/ssl/mirror-ca.pem, insecure_skip_verify: false}
//
// A pull of an image of registry R tries each endpoint of mirrors[R] (else of
// mirrors["*"]) in order, then R itself (docker.io: registry-1.docker.io), as
// containerd does. The file is checked whole when loaded: a mistake is an
// error naming the file and the field, never a pull that fails later.

import { existsSync, readFileSync } from "node:fs";
import { parse } from "yaml";

export interface RegistryAuth {
  username?: string;
  password?: string;
  /** base64 of "username:password". */
  auth?: string;
  /** A bearer token to send as is. */
  identityToken?: string;
}

export interface RegistryTls {
  /** PEM of the CA certificates that sign the registry's serving certificate (read from ca_file). */
  ca?: string;
  caFile?: string;
  /** PEM of a client certificate and its key (cert_file, key_file). */
  cert?: string;
  key?: string;
  certFile?: string;
  keyFile?: string;
  insecureSkipVerify: boolean;
}

export interface RegistryHostConfig {
  auth?: RegistryAuth;
  tls?: RegistryTls;
}

export interface RegistryMirror {
  /** Endpoint URLs in the order they are tried, each with the API root ("/v2" unless the URL's path says otherwise). */
  endpoints: URL[];
  /** Repository rewrites (pattern → replacement, `$1`...), applied on the mirrors only. */
  rewrite: Array<{ pattern: RegExp; replacement: string }>;
}

export interface RegistriesConfig {
  /** The file it was read from, for messages ("" when built in code). */
  file: string;
  mirrors: Map<string, RegistryMirror>;
  /** By host[:port] of a registry or mirror endpoint. */
  configs: Map<string, RegistryHostConfig>;
}

export class RegistriesConfigError extends Error {
  readonly file: string;
  readonly field: string;
  constructor(file: string, field: string, message: string) {
    super(`${file}: ${field ? `${field}: ` : ""}${message}`);
    this.name = "RegistriesConfigError";
    this.file = file;
    this.field = field;
  }
}

export const EMPTY_REGISTRIES: RegistriesConfig = { file: "", mirrors: new Map(), configs: new Map() };

/** Reads and checks a registries file; throws RegistriesConfigError naming the file and the field. */
export function loadRegistriesConfig(file: string): RegistriesConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new RegistriesConfigError(file, "", `cannot read the registries file: ${(err as Error).message}`);
  }
  return parseRegistriesConfig(text, file);
}

/**
 * The registries file a command uses: `given` (a flag; it must exist), else
 * `fallback` when that file exists (DATA_DIR/registries.yaml), else none.
 */
export function loadRegistriesFile(given: string, fallback: string): RegistriesConfig | undefined {
  if (given !== "") return loadRegistriesConfig(given);
  return existsSync(fallback) ? loadRegistriesConfig(fallback) : undefined;
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks a registries file's text (YAML or JSON); `file` names it in errors and anchors relative paths. */
export function parseRegistriesConfig(text: string, file: string): RegistriesConfig {
  const fail = (field: string, message: string): never => {
    throw new RegistriesConfigError(file, field, message);
  };
  let doc: unknown;
  try {
    doc = parse(text, { uniqueKeys: true });
  } catch (err) {
    fail("", `not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return { file, mirrors: new Map(), configs: new Map() };
  if (!isObject(doc)) return fail("", `must be a mapping with "mirrors" and "configs", not ${describe(doc)}`);
  unknownKeys(doc, ["mirrors", "configs"], "", fail);
  const mirrors = new Map<string, RegistryMirror>();
  const configs = new Map<string, RegistryHostConfig>();
  const mirrorsDoc = doc["mirrors"] ?? {};
  if (!isObject(mirrorsDoc)) fail("mirrors", `must be a mapping of registry host to mirror, not ${describe(mirrorsDoc)}`);
  for (const [host, value] of Object.entries(mirrorsDoc as Obj)) {
    const field = `mirrors[${JSON.stringify(host)}]`;
    if (host !== "*") checkHost(host, field, fail);
    if (!isObject(value)) return fail(field, `must be a mapping with "endpoint", not ${describe(value)}`);
    unknownKeys(value, ["endpoint", "rewrite"], field, fail);
    const list = value["endpoint"] ?? [];
    if (!Array.isArray(list)) return fail(`${field}.endpoint`, `must be a list of URLs, not ${describe(list)}`);
    const endpoints = list.map((e, i) => endpointUrl(e, `${field}.endpoint[${i}]`, fail));
    const rewriteDoc = value["rewrite"] ?? {};
    if (!isObject(rewriteDoc)) return fail(`${field}.rewrite`, `must be a mapping of pattern to replacement, not ${describe(rewriteDoc)}`);
    const rewrite = Object.entries(rewriteDoc).map(([pattern, replacement]) => {
      const at = `${field}.rewrite[${JSON.stringify(pattern)}]`;
      if (typeof replacement !== "string") return fail(at, `the replacement must be a string, not ${describe(replacement)}`);
      try {
        return { pattern: new RegExp(pattern), replacement };
      } catch (err) {
        return fail(at, `not a valid regular expression: ${(err as Error).message}`);
      }
    });
    mirrors.set(host, { endpoints, rewrite });
  }
  const configsDoc = doc["configs"] ?? {};
  if (!isObject(configsDoc)) fail("configs", `must be a mapping of registry host to its settings, not ${describe(configsDoc)}`);
  for (const [host, value] of Object.entries(configsDoc as Obj)) {
    const field = `configs[${JSON.stringify(host)}]`;
    checkHost(host, field, fail);
    if (!isObject(value)) return fail(field, `must be a mapping with "auth" and/or "tls", not ${describe(value)}`);
    unknownKeys(value, ["auth", "tls"], field, fail);
    const entry: RegistryHostConfig = {};
    if (value["auth"] !== undefined) entry.auth = authOf(value["auth"], `${field}.auth`, fail);
    if (value["tls"] !== undefined) entry.tls = tlsOf(value["tls"], `${field}.tls`, file, fail);
    configs.set(host, entry);
  }
  return { file, mirrors, configs };
}

type Fail = (field: string, message: string) => never;

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "a mapping" : `${typeof v} ${JSON.stringify(v)}`;
}

function unknownKeys(obj: Obj, known: string[], field: string, fail: Fail): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) fail(field ? `${field}.${key}` : key, `unknown field (known: ${known.join(", ")})`);
  }
}

/** A registry host as image references name it: host or host:port, no scheme or path. */
function checkHost(host: string, field: string, fail: Fail): void {
  if (!/^(\[[0-9a-fA-F:.]+\]|[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?)(:\d{1,5})?$/.test(host)) {
    fail(field, `${JSON.stringify(host)} is not a registry host (host or host:port, without a scheme or path)`);
  }
}

function endpointUrl(value: unknown, field: string, fail: Fail): URL {
  if (typeof value !== "string" || value === "") return fail(field, `must be a URL string, not ${describe(value)}`);
  // As k3s: an endpoint without a scheme is spoken to over HTTPS.
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(field, `${JSON.stringify(value)} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail(field, `${JSON.stringify(value)}: the scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") fail(field, `${JSON.stringify(value)}: an endpoint has no query, fragment or user (credentials go in configs)`);
  // The API root: /v2 unless the path already ends in it (a mirror under a prefix: https://host/prefix → /prefix/v2).
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/v2") ? path : `${path}/v2`;
  return url;
}

function authOf(value: unknown, field: string, fail: Fail): RegistryAuth {
  if (!isObject(value)) return fail(field, `must be a mapping (username, password, auth, identity_token), not ${describe(value)}`);
  unknownKeys(value, ["username", "password", "auth", "identity_token"], field, fail);
  const out: RegistryAuth = {};
  for (const [key, name] of [["username", "username"], ["password", "password"], ["auth", "auth"], ["identity_token", "identityToken"]] as const) {
    const v = value[key];
    if (v === undefined) continue;
    if (typeof v !== "string") return fail(`${field}.${key}`, `must be a string, not ${describe(v)}`);
    out[name] = v;
  }
  if (out.auth !== undefined) {
    const decoded = Buffer.from(out.auth, "base64").toString("utf8");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(out.auth) || !decoded.includes(":")) fail(`${field}.auth`, `must be base64 of "username:password"`);
  }
  if (out.password !== undefined && out.username === undefined) fail(`${field}.password`, "a password needs a username");
  if (out.username === undefined && out.auth === undefined && out.identityToken === undefined) fail(field, "names no credentials: set username and password, auth or identity_token");
  return out;
}

function tlsOf(value: unknown, field: string, file: string, fail: Fail): RegistryTls {
  if (!isObject(value)) return fail(field, `must be a mapping (ca_file, cert_file, key_file, insecure_skip_verify), not ${describe(value)}`);
  unknownKeys(value, ["ca_file", "cert_file", "key_file", "insecure_skip_verify"], field, fail);
  const out: RegistryTls = { insecureSkipVerify: false };
  const skip = value["insecure_skip_verify"];
  if (skip !== undefined) {
    if (typeof skip !== "boolean") return fail(`${field}.insecure_skip_verify`, `must be true or false, not ${describe(skip)}`);
    out.insecureSkipVerify = skip;
  }
  const read = (key: "ca_file" | "cert_file" | "key_file"): [string, string] | undefined => {
    const v = value[key];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") return fail(`${field}.${key}`, `must be a file path, not ${describe(v)}`);
    const path = v.startsWith("/") || file === "" ? v : `${file.replace(/[^/]*$/, "")}${v}`;
    try {
      const pem = readFileSync(path, "utf8");
      if (!pem.includes("-----BEGIN ")) return fail(`${field}.${key}`, `${path} holds no PEM block`);
      return [path, pem];
    } catch (err) {
      if (err instanceof RegistriesConfigError) throw err;
      return fail(`${field}.${key}`, `cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const ca = read("ca_file");
  const cert = read("cert_file");
  const key = read("key_file");
  if ((cert === undefined) !== (key === undefined)) fail(`${field}.${cert === undefined ? "cert_file" : "key_file"}`, "cert_file and key_file go together");
  if (ca) [out.caFile, out.ca] = ca;
  if (cert) [out.certFile, out.cert] = cert;
  if (key) [out.keyFile, out.key] = key;
  return out;
}

/** One place a pull may fetch from: a mirror endpoint or the registry itself. */
export interface PullEndpoint {
  /** The API root, e.g. http://127.0.0.1:5000/v2. */
  base: string;
  /** host[:port] of the endpoint, the key of its configs entry. */
  host: string;
  /** The repository path on this endpoint (rewritten on a mirror). */
  repository: string;
  mirror: boolean;
  config: RegistryHostConfig | undefined;
}

/**
 * Where a pull of `repository` from `registry` (host[:port] as the image is
 * named: docker.io, quay.io, 127.0.0.1:5000) goes, in order: its mirrors'
 * endpoints, then the registry itself. `insecure` lists registries spoken to
 * over plain HTTP (loopback ones always are).
 */
export function pullEndpoints(config: RegistriesConfig, registry: string, repository: string, insecure: readonly string[] = []): PullEndpoint[] {
  const mirror = config.mirrors.get(registry) ?? config.mirrors.get("*");
  const host = registry === "docker.io" ? "registry-1.docker.io" : registry;
  const plain = isLoopback(host) || insecure.includes(host) || insecure.includes(registry);
  const own: PullEndpoint = { base: `${plain ? "http" : "https"}://${host}/v2`, host, repository, mirror: false, config: config.configs.get(registry) ?? config.configs.get(host) };
  const out: PullEndpoint[] = [];
  for (const url of mirror?.endpoints ?? []) {
    const base = url.href.replace(/\/$/, "");
    // A mirror listed as the registry's own address is the registry (its credentials, no rewrite), tried once.
    if (base === own.base) {
      if (!out.includes(own)) out.push(own);
      continue;
    }
    const rule = mirror!.rewrite.find((r) => r.pattern.test(repository));
    const path = rule === undefined ? repository : repository.replace(rule.pattern, rule.replacement);
    out.push({ base, host: url.host, repository: path, mirror: true, config: config.configs.get(url.host) });
  }
  if (!out.includes(own)) out.push(own);
  return out;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\./.test(h);
}

/**
 * containerd's registry host files (config_path, e.g. /etc/containerd/certs.d)
 * for the same settings: `<registry>/hosts.toml` per mirrored or configured
 * registry, the mirrors as [host] entries in order and the registry as server.
 * Returns relative path → content.
 */
export function containerdHostsFiles(config: RegistriesConfig): Map<string, string> {
  const files = new Map<string, string>();
  const q = (s: string) => JSON.stringify(s);
  const tlsLines = (c: RegistryHostConfig | undefined): string[] => {
    const lines: string[] = [];
    if (c?.tls?.caFile) lines.push(`  ca = ${q(c.tls.caFile)}`);
    if (c?.tls?.certFile && c.tls.keyFile) lines.push(`  client = [[${q(c.tls.certFile)}, ${q(c.tls.keyFile)}]]`);
    if (c?.tls?.insecureSkipVerify) lines.push("  skip_verify = true");
    return lines;
  };
  const registries = new Set([...config.mirrors.keys(), ...[...config.configs.keys()].filter((h) => ![...config.mirrors.values()].some((m) => m.endpoints.some((e) => e.host === h)))]);
  for (const registry of registries) {
    const dir = registry === "*" ? "_default" : registry;
    const server = registry === "*" ? undefined : registry === "docker.io" ? "https://registry-1.docker.io" : `${isLoopback(registry) ? "http" : "https"}://${registry}`;
    const lines = [`# Written by orch from ${config.file || "its registries settings"}.`];
    if (server !== undefined) lines.push(`server = ${q(server)}`);
    const own = config.configs.get(registry);
    if (own?.tls) lines.push(...tlsLines(own).map((l) => l.trimStart()));
    for (const url of config.mirrors.get(registry)?.endpoints ?? []) {
      // containerd appends /v2 to a host's URL unless override_path says the URL is the API root already.
      const prefixed = url.pathname !== "/v2";
      lines.push("", `[host.${q(prefixed ? url.href : url.origin)}]`, `  capabilities = ["pull", "resolve"]`);
      if (prefixed) lines.push("  override_path = true");
      lines.push(...tlsLines(config.configs.get(url.host)));
    }
    files.set(`${dir}/hosts.toml`, `${lines.join("\n")}\n`);
  }
  return files;
}
