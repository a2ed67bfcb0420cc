// Pulls an image from an OCI distribution registry (Docker Registry HTTP API
// v2) into the ImageStore: manifest (or index: this machine's platform),
// config and layers, each checked against its digest, then unpacked like an
// imported archive. Anonymous, Basic and Bearer-token access; loopback
// registries (and those listed as insecure) are spoken to over plain HTTP,
// as docker does.

import { createHash } from "node:crypto";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { applyLayer } from "./archive.js";
import { normalizeReference } from "./reference.js";
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
  signal?: AbortSignal;
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

function isLoopback(host: string): boolean {
  const h = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\./.test(h);
}

/** Pulls `ref` into `store`; throws an Error naming the step that failed. */
export async function pullImage(store: ImageStore, ref: string, options: PullOptions = {}): Promise<StoredImage> {
  const { host, repository, reference, name, tag } = parseReference(ref);
  const base = `${isLoopback(host) || options.insecure?.includes(host) ? "http" : "https"}://${host}/v2/${repository}`;
  const client = new RegistryClient(options.credentials, options.signal);
  let manifestDigest = "";
  let manifest = await client.json(`${base}/manifests/${reference}`, MANIFEST_TYPES, (d) => (manifestDigest = d));
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

/** HTTP with the registry's auth dance: on 401, Basic or a Bearer token from the realm it names. */
class RegistryClient {
  readonly #credentials: RegistryCredentials | undefined;
  readonly #signal: AbortSignal | undefined;
  #authorization: string | undefined;

  constructor(credentials: RegistryCredentials | undefined, signal: AbortSignal | undefined) {
    this.#credentials = credentials;
    this.#signal = signal;
    if (credentials?.registryToken) this.#authorization = `Bearer ${credentials.registryToken}`;
  }

  async json(url: string, accept: string, onDigest: (digest: string) => void): Promise<Record<string, unknown>> {
    const res = await this.#get(url, accept);
    const body = Buffer.from(await res.arrayBuffer());
    onDigest(res.headers.get("docker-content-digest") ?? `sha256:${createHash("sha256").update(body).digest("hex")}`);
    return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  }

  /** Downloads a blob to `file`, failing when its content does not match `digest`. */
  async blob(url: string, digest: string, file: string): Promise<void> {
    const res = await this.#get(url, "*/*");
    const hash = createHash("sha256");
    const body = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
    body.on("data", (chunk: Buffer) => hash.update(chunk));
    await pipeline(body, createWriteStream(file));
    const got = `sha256:${hash.digest("hex")}`;
    if (digest.startsWith("sha256:") && got !== digest) throw new Error(`blob ${digest} arrived with digest ${got}`);
  }

  async #get(url: string, accept: string, retried = false): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(url, { headers: { accept, ...(this.#authorization ? { authorization: this.#authorization } : {}) }, redirect: "follow", ...(this.#signal ? { signal: this.#signal } : {}) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`failed to do request: GET ${url}: ${cause?.message ?? (err as Error).message}`);
    }
    if (res.status === 401 && !retried) {
      await res.arrayBuffer();
      this.#authorization = await this.#authorize(res.headers.get("www-authenticate") ?? "");
      return this.#get(url, accept, true);
    }
    if (!res.ok) {
      const text = (await res.text()).slice(0, 300);
      throw new Error(`GET ${url}: ${res.status} ${res.statusText}${text ? `: ${text.trim()}` : ""}`);
    }
    return res;
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
    const res = await fetch(tokenUrl, { headers: basic ? { authorization: `Basic ${basic}` } : {}, ...(this.#signal ? { signal: this.#signal } : {}) });
    if (!res.ok) throw new Error(`token request to ${tokenUrl.origin}${tokenUrl.pathname}: ${res.status} ${res.statusText}`);
    const body = (await res.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new Error("the token service answered without a token");
    return `Bearer ${token}`;
  }
}
