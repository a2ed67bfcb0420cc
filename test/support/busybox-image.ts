// Builds a busybox image from the host's /bin/busybox (Debian busybox-static)
// without a registry: a single layer (busybox, its applet links, /etc/passwd)
// packed as a `docker save` tarball or an OCI layout tarball. containerd
// imports it with `ctr images import`; the embedded runtime with `orch images import`.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { skipOrFailInCi } from "./skip.js";

export const BUSYBOX = "/bin/busybox";

/** Why busybox images cannot be built here, or undefined; with CI=true a missing busybox is an error. */
export function busyboxSkipReason(): string | undefined {
  return skipOrFailInCi(existsSync(BUSYBOX) ? undefined : `${BUSYBOX} not found (apt-get install busybox-static)`);
}

export interface BusyboxImageOptions {
  /** Where to write the tarball. */
  file: string;
  /** Names in the archive, e.g. "docker.io/library/busybox:latest" (the default). */
  tags?: string[];
  format?: "docker" | "oci";
  /** Extra files in the layer, path (relative) → content; makes a distinct image. */
  files?: Record<string, string>;
  /** The image's default command (Cmd); default ["sh"]. */
  cmd?: string[];
}

function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Writes the image tarball; returns its image ID (`sha256:` + config digest). */
export async function buildBusyboxImage(options: BusyboxImageOptions): Promise<string> {
  const tags = options.tags ?? ["docker.io/library/busybox:latest"];
  const work = mkdtempSync(join(tmpdir(), "orch-busybox-image-"));
  try {
    const root = join(work, "rootfs");
    for (const d of ["bin", "etc", "tmp", "proc", "sys", "dev", "root"]) mkdirSync(join(root, d), { recursive: true });
    copyFileSync(BUSYBOX, join(root, "bin", "busybox"));
    const applets = execFileSync(BUSYBOX, ["--list"], { encoding: "utf8" }).split("\n").filter((a) => a !== "" && a !== "busybox");
    for (const a of applets) symlinkSync("busybox", join(root, "bin", a));
    writeFileSync(join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n");
    writeFileSync(join(root, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n");
    for (const [path, content] of Object.entries(options.files ?? {})) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    return await packImage(root, { file: options.file, tags, format: options.format ?? "docker", config: { Cmd: options.cmd ?? ["sh"] } });
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 10 });
  }
}

export interface PackOptions {
  /** Where to write the tarball. */
  file: string;
  /** Names in the archive, e.g. "docker.io/library/busybox:latest". */
  tags: string[];
  format: "docker" | "oci";
  /** The image config's `config` part (Cmd, Entrypoint, WorkingDir, User...); PATH is set. */
  config: Record<string, unknown>;
}

/**
 * Packs the folder `root` as a one-layer image tarball (docker save or OCI layout)
 * named `tags`; returns its image ID (`sha256:` + config digest).
 */
export async function packImage(root: string, options: PackOptions): Promise<string> {
  const tags = options.tags;
    const work = mkdtempSync(join(tmpdir(), "orch-image-"));
  try {
    const layerFile = join(work, "layer.tar");
    await tar.c({ cwd: root, file: layerFile, portable: true, noMtime: true }, readdirSync(root).sort());
    const layer = readFileSync(layerFile);
    const layerHex = sha256(layer);
    const config = JSON.stringify({
      architecture: process.arch === "x64" ? "amd64" : process.arch,
      os: "linux",
      config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], ...options.config },
      rootfs: { type: "layers", diff_ids: [`sha256:${layerHex}`] },
    });
    const configHex = sha256(config);
    const out = join(work, "out");
    if (options.format === "docker") {
      mkdirSync(join(out, layerHex), { recursive: true });
      copyFileSync(layerFile, join(out, layerHex, "layer.tar"));
      writeFileSync(join(out, `${configHex}.json`), config);
      writeFileSync(join(out, "manifest.json"), JSON.stringify([{ Config: `${configHex}.json`, RepoTags: tags, Layers: [`${layerHex}/layer.tar`] }]));
    } else {
      const blobs = join(out, "blobs", "sha256");
      mkdirSync(blobs, { recursive: true });
      copyFileSync(layerFile, join(blobs, layerHex));
      writeFileSync(join(blobs, configHex), config);
      const manifest = JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: `sha256:${configHex}`, size: Buffer.byteLength(config) },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: `sha256:${layerHex}`, size: layer.length }],
      });
      const manifestHex = sha256(manifest);
      writeFileSync(join(blobs, manifestHex), manifest);
      writeFileSync(join(out, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
      writeFileSync(join(out, "index.json"), JSON.stringify({
        schemaVersion: 2,
        manifests: tags.map((t) => ({
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          digest: `sha256:${manifestHex}`,
          size: Buffer.byteLength(manifest),
          annotations: { "io.containerd.image.name": t, "org.opencontainers.image.ref.name": t.replace(/^.*:/, "") },
        })),
      }));
    }
    await tar.c({ cwd: out, file: options.file, portable: true }, readdirSync(out));
    return `sha256:${configHex}`;
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 10 });
  }
}
