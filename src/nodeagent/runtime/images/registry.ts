// Pulls an image from an OCI distribution registry (Docker Registry HTTP API
// v2) into the ImageStore: manifest (or index: this machine's platform),
// config and layers, each checked against its digest, then unpacked like an
// imported archive. Anonymous, Basic and Bearer-token access; loopback
// registries (and those listed as insecure) are spoken to over plain HTTP,
// as docker does. Mirrors, per-host credentials and TLS come from the
// registries file (registries.ts).

import { createHash } from "node:crypto";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { pipeline } from "node:stream/promises";
import { applyLayer } from "./archive.js";
import { normalizeReference } from "./reference.js";
import { EMPTY_REGISTRIES, pullEndpoints, type RegistriesConfig, type RegistryTls } from "./registries.js";
import type { ImageConfig, ImageStore, StoredImage } from "./store.js";

const MANIFEST_TYPES = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

export interface RegistryCredentials {
  username?: string;
  password?: string;
  /** base64 of "username:password", as in a docker config. */
  auth?: string;
  /** A bearer token to send as is. */
  registryToken?: string;
}

export interface PullOptions {
  credentials?: RegistryCredentials;
  /** Registry hosts (host[:port]) spoken to over HTTP; loopback hosts always are. */
  insecure?: readonly string[];
  /** Mirrors, credentials and TLS settings by registry (the registries file, registries.ts). */
  registries?: RegistriesConfig;
  signal?: AbortSignal;
  /** Told of each mirror that failed before the next endpoint is tried. */
  log?: (line: string) => void;
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  platform?: { os?: string; architecture?: string };
}

/** Splits a normalized reference into registry host, repository and tag or digest. */
export function parseReference(ref: string): { host: string; repository: string; reference: string; name: string; tag?: string } {
  const full = normalizeReference(ref);
  const at = full.indexOf("@");
  const nameTag = at >= 0 ? full.slice(0, at) : full;
  const colon = nameTag.lastIndexOf(":");
  const hasTag = colon > nameTag.lastIndexOf("/");
  const name = hasTag ? nameTag.slice(0, colon) : nameTag;
  const slash = name.indexOf("/");
  const domain = name.slice(0, slash);
  return {
    host: domain === "docker.io" ? "registry-1.docker.io" : domain,
    repository: name.slice(slash + 1),
    reference: at >= 0 ? full.slice(at + 1) : nameTag.slice(colon + 1),
    name,
    ...(hasTag ? { tag: full.slice(0, at >= 0 ? at : undefined) } : {}),
  };
}

/**
 * Pulls `ref` into `store`; throws an Error naming the step that failed. With
 * `registries`, the image's mirrors are tried in order before its registry:
 * the first that answers the manifest serves the blobs too.
 */
export async function pullImage(store: ImageStore, ref: string, options: PullOptions = {}): Promise<StoredImage> {
  const { repository, reference, name, tag } = parseReference(ref);
  const failures: string[] = [];
  let found: { client: RegistryClient; base: string; manifest: Record<string, unknown>; digest: string } | undefined;
  const endpoints = pullEndpoints(options.registries ?? EMPTY_REGISTRIES, name.slice(0, name.indexOf("/")), repository, options.insecure);
  for (const [i, endpoint] of endpoints.entries()) {
    // Credentials of the pod (the CRI request) are for the registry the image names; a mirror gets its own from the file.
    const fromFile = endpoint.config?.auth;
    const credentials = !endpoint.mirror && options.credentials ? options.credentials : fromFile ? { ...fromFile, ...(fromFile.identityToken ? { registryToken: fromFile.identityToken } : {}) } : undefined;
    const client = new RegistryClient(credentials, endpoint.config?.tls, options.signal);
    const base = `${endpoint.base}/${endpoint.repository}`;
    try {
      let digest = "";
      const manifest = await client.json(`${base}/manifests/${reference}`, MANIFEST_TYPES, (d) => (digest = d));
      // Asked by digest, the manifest must be that one, whoever serves it.
      if (reference.startsWith("sha256:") && digest !== reference) throw new Error(`GET ${base}/manifests/${reference}: the manifest arrived with digest ${digest}`);
      found = { client, base, manifest, digest };
      break;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      failures.push((err as Error).message);
      // The last one's failure is the pull's error; those before it are said as they happen.
      if (i < endpoints.length - 1) options.log?.(`pulling ${ref}: ${endpoint.mirror ? "mirror" : "registry"} ${endpoint.base} failed: ${(err as Error).message}`);
    }
  }
  if (found === undefined) throw new Error(failures.join("; "));
  const { client, base } = found;
  const manifestDigest = found.digest;
  let manifest = found.manifest;
  if (Array.isArray(manifest.manifests)) {
    const arch = process.arch === "x64" ? "amd64" : process.arch;
    const pick = (manifest.manifests as Descriptor[]).find((m) => m.platform?.os === "linux" && m.platform.architecture === arch);
    if (pick === undefined) throw new Error(`no image for linux/${arch} in ${ref}`);
    manifest = await client.json(`${base}/manifests/${pick.digest}`, MANIFEST_TYPES, () => {});
  }
  const config = manifest.config as Descriptor | undefined;
  const layers = manifest.layers as Descriptor[] | undefined;
  if (config === undefined || !Array.isArray(layers)) throw new Error(`the manifest of ${ref} has no config or layers`);
  const work = mkdtempSync(join(store.dir, ".pull-"));
  try {
    const configFile = join(work, "config.json");
    await client.blob(`${base}/blobs/${config.digest}`, config.digest, configFile);
    const staging = store.stagingDir();
    let size = 0;
    for (const [i, layer] of layers.entries()) {
      if (/zstd/.test(layer.mediaType ?? "")) throw new Error(`layer ${layer.digest} is zstd-compressed, which the embedded runtime cannot unpack`);
      const file = join(work, `layer-${i}`);
      await client.blob(`${base}/blobs/${layer.digest}`, layer.digest, file);
      size += layer.size ?? 0;
      await applyLayer(file, staging);
    }
    const parsed = JSON.parse(readFileSync(configFile, "utf8")) as { config?: ImageConfig };
    return store.add({
      id: config.digest,
      repoTags: tag === undefined ? [] : [tag],
      repoDigests: manifestDigest === "" ? [] : [`${name}@${manifestDigest}`],
      size,
      config: parsed.config ?? {},
      importedAt: new Date().toISOString(),
    }, staging);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A response: status, headers, and the body as a stream (read once). */
interface HttpResponse {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  body: IncomingMessage;
  text(): Promise<string>;
  buffer(): Promise<Buffer>;
}

/**
 * HTTP with the registry's auth dance (on 401, Basic or a Bearer token from
 * the realm it names), over node's http/https so an endpoint's own CA, client
 * certificate and insecure_skip_verify apply. Redirects (blob storage) are
 * followed; the registry's authorization is not sent to another host.
 */
class RegistryClient {
  readonly #credentials: RegistryCredentials | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #tls: https.RequestOptions;
  #authorization: string | undefined;

  constructor(credentials: RegistryCredentials | undefined, tls: RegistryTls | undefined, signal: AbortSignal | undefined) {
    this.#credentials = credentials;
    this.#signal = signal;
    this.#tls = {
      ...(tls?.ca ? { ca: tls.ca } : {}),
      ...(tls?.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
      ...(tls?.insecureSkipVerify ? { rejectUnauthorized: false } : {}),
    };
    if (credentials?.registryToken) this.#authorization = `Bearer ${credentials.registryToken}`;
  }

  async json(url: string, accept: string, onDigest: (digest: string) => void): Promise<Record<string, unknown>> {
    const res = await this.#get(url, accept);
    const body = await res.buffer();
    // The digest of the bytes received (what docker-content-digest claims, checked).
    onDigest(`sha256:${createHash("sha256").update(body).digest("hex")}`);
    try {
      return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
    } catch {
      throw new Error(`GET ${url}: the answer is not JSON: ${body.toString("utf8").slice(0, 100)}`);
    }
  }

  /** Downloads a blob to `file`, failing when its content does not match `digest`. */
  async blob(url: string, digest: string, file: string): Promise<void> {
    const res = await this.#get(url, "*/*");
    const hash = createHash("sha256");
    res.body.on("data", (chunk: Buffer) => hash.update(chunk));
    await pipeline(res.body, createWriteStream(file));
    const got = `sha256:${hash.digest("hex")}`;
    if (digest.startsWith("sha256:") && got !== digest) throw new Error(`blob ${digest} arrived with digest ${got}`);
  }

  async #get(url: string, accept: string, retried = false): Promise<HttpResponse> {
    const res = await this.#request(url, { accept, ...(this.#authorization ? { authorization: this.#authorization } : {}) });
    if (res.status === 401 && !retried) {
      await res.buffer();
      this.#authorization = await this.#authorize(res.header("www-authenticate") ?? "");
      return this.#get(url, accept, true);
    }
    if (res.status < 200 || res.status > 299) {
      const text = (await res.text()).slice(0, 300);
      throw new Error(`GET ${url}: ${res.status} ${res.statusText}${text ? `: ${text.trim()}` : ""}`);
    }
    return res;
  }

  /** One GET, following up to 10 redirects; `authorization` only goes to the first URL's host. */
  async #request(url: string, headers: Record<string, string>, hops = 0): Promise<HttpResponse> {
    const target = new URL(url);
    const mod = target.protocol === "https:" ? https : http;
    let res: IncomingMessage;
    try {
      res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = mod.get(target, { headers, ...(target.protocol === "https:" ? this.#tls : {}), ...(this.#signal ? { signal: this.#signal } : {}) }, resolve);
        req.setTimeout(60_000, () => req.destroy(new Error("no answer in 60 s")));
        req.once("error", reject);
      });
    } catch (err) {
      throw new Error(`failed to do request: GET ${url}: ${(err as Error).message}`);
    }
    const location = res.headers.location;
    if (res.statusCode !== undefined && [301, 302, 303, 307, 308].includes(res.statusCode) && location) {
      res.resume();
      if (hops >= 10) throw new Error(`GET ${url}: too many redirects`);
      const next = new URL(location, target);
      const { authorization: _, ...rest } = headers;
      return this.#request(next.href, next.host === target.host ? headers : rest, hops + 1);
    }
    const read = async (): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };
    return {
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? "",
      header: (name) => {
        const v = res.headers[name.toLowerCase()];
        return Array.isArray(v) ? v.join(", ") : v;
      },
      body: res,
      text: async () => (await read()).toString("utf8"),
      buffer: read,
    };
  }

  async #authorize(challenge: string): Promise<string> {
    const c = this.#credentials;
    const basic = c?.auth ? c.auth : c?.username ? Buffer.from(`${c.username}:${c.password ?? ""}`).toString("base64") : undefined;
    if (/^basic/i.test(challenge)) {
      if (basic === undefined) throw new Error("the registry asks for a user name and password");
      return `Basic ${basic}`;
    }
    const params = Object.fromEntries([...challenge.replace(/^bearer\s+/i, "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
    if (params.realm === undefined) throw new Error(`unauthorized, and the registry's challenge names no token realm: ${challenge}`);
    const tokenUrl = new URL(params.realm);
    if (params.service) tokenUrl.searchParams.set("service", params.service);
    if (params.scope) tokenUrl.searchParams.set("scope", params.scope);
    const res = await this.#request(tokenUrl.href, basic ? { authorization: `Basic ${basic}` } : {});
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`token request to ${tokenUrl.origin}${tokenUrl.pathname}: ${res.status} ${res.statusText}`);
    let body: { token?: string; access_token?: string };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new Error(`token request to ${tokenUrl.origin}${tokenUrl.pathname}: the answer is not JSON`);
    }
    const token = body.token ?? body.access_token;
    if (!token) throw new Error("the token service answered without a token");
    return `Bearer ${token}`;
  }
}
