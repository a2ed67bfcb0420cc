// Runs Debian's docker-registry (Docker Registry 2.8, the OCI distribution
// server) on loopback for a test, and pushes images into it through the
// registry HTTP API from docker-save tarballs, so pulls are tested against a
// real registry without the network. With `tls`, a second process serves the
// same storage over HTTPS (pushes stay on the plain one).

import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { get as httpsGet } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { skipOrFailInCi } from "./skip.js";

const BINARY = "/usr/bin/docker-registry";

/** Why a registry cannot run here, or undefined; with CI=true a missing package is an error. */
export function registrySkipReason(): string | undefined {
  return skipOrFailInCi(existsSync(BINARY) ? undefined : `${BINARY} not found (apt-get install docker-registry)`);
}

export interface Registry {
  /** host:port, e.g. 127.0.0.1:41234. */
  readonly host: string;
  /** host:port of the same registry over HTTPS, when started with `tls`. */
  readonly tlsHost?: string;
  /** Pushes the first image of a docker-save tarball as `repository:tag`; returns the manifest digest. */
  push(file: string, repository: string, tag: string): Promise<string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RegistryOptions {
  /** Also serve the same storage over HTTPS with this certificate (chain) and key: `tlsHost`. Pushes go over plain HTTP. */
  tls?: { cert: string; key: string };
}

/** One docker-registry process serving `storage` on a free loopback port; resolves once /v2/ answers. */
async function serveRegistry(dir: string, name: string, storage: string, tls?: { cert: string; key: string }): Promise<{ host: string; child: ChildProcess; exited: Promise<void> }> {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const config = join(dir, `${name}.yml`);
  if (tls) {
    writeFileSync(join(dir, `${name}.crt`), tls.cert);
    writeFileSync(join(dir, `${name}.key`), tls.key);
  }
  writeFileSync(config, [
    "version: 0.1",
    "log:",
    "  level: warn",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${storage}`,
    "http:",
    `  addr: ${host}`,
    ...(tls ? ["  tls:", `    certificate: ${join(dir, `${name}.crt`)}`, `    key: ${join(dir, `${name}.key`)}`] : []),
    "",
  ].join("\n"));
  const logFile = join(dir, `${name}.log`);
  const log = openSync(logFile, "a");
  const child: ChildProcess = spawn(BINARY, ["serve", config], { stdio: ["ignore", log, log] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (await answers(host, tls !== undefined)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`docker-registry did not start: ${readFileSync(logFile, "utf8").slice(-1000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { host, child, exited };
}

/** Whether a registry answers /v2/ at host (over TLS: any certificate, this only waits for the port). */
async function answers(host: string, tls: boolean): Promise<boolean> {
  if (!tls) return fetch(`http://${host}/v2/`).then((r) => r.ok, () => false);
  return new Promise((resolve) => {
    const req = httpsGet(`https://${host}/v2/`, { rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once("error", () => resolve(false));
  });
}

export async function startRegistry(options: RegistryOptions = {}): Promise<Registry> {
  const dir = mkdtempSync(join(tmpdir(), "orch-registry-"));
  const storage = join(dir, "data");
  const plain = await serveRegistry(dir, "registry", storage);
  const secure = options.tls ? await serveRegistry(dir, "registry-tls", storage, options.tls).catch(async (err: Error) => {
    plain.child.kill("SIGKILL");
    throw err;
  }) : undefined;
  const host = plain.host;
  const base = `http://${host}/v2`;
  const pushBlob = async (repository: string, data: Buffer): Promise<string> => {
    const digest = `sha256:${createHash("sha256").update(data).digest("hex")}`;
    const start = await fetch(`${base}/${repository}/blobs/uploads/`, { method: "POST" });
    if (start.status !== 202) throw new Error(`blob upload start: ${start.status}`);
    const location = new URL(start.headers.get("location")!, `http://${host}`);
    location.searchParams.set("digest", digest);
    const put = await fetch(location, { method: "PUT", body: data, headers: { "content-type": "application/octet-stream" } });
    if (put.status !== 201) throw new Error(`blob upload: ${put.status} ${await put.text()}`);
    return digest;
  };

  return {
    host,
    ...(secure ? { tlsHost: secure.host } : {}),
    async push(file, repository, tag) {
      const work = mkdtempSync(join(tmpdir(), "orch-registry-push-"));
      try {
        await tar.x({ file, cwd: work });
        const [entry] = JSON.parse(readFileSync(join(work, "manifest.json"), "utf8")) as { Config: string; Layers: string[] }[];
        const config = readFileSync(join(work, entry!.Config));
        const layers = entry!.Layers.map((l) => readFileSync(join(work, l)));
        const manifest = JSON.stringify({
          schemaVersion: 2,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: await pushBlob(repository, config), size: config.length },
          layers: await Promise.all(layers.map(async (l) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: await pushBlob(repository, l), size: l.length }))),
        });
        const res = await fetch(`${base}/${repository}/manifests/${tag}`, { method: "PUT", body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
        if (res.status !== 201) throw new Error(`manifest push: ${res.status} ${await res.text()}`);
        return res.headers.get("docker-content-digest")!;
      } finally {
        rmSync(work, { recursive: true, force: true, maxRetries: 10 });
      }
    },
    async stop() {
      for (const { child, exited } of [plain, ...(secure ? [secure] : [])]) {
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        child.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}
