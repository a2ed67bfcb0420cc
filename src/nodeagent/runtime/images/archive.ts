// Imports image archives into the ImageStore: `docker save` tarballs
// (manifest.json + config + layer tars) and OCI image layouts (oci-layout,
// index.json, blobs/sha256/…), plain or gzip-compressed, with gzip or plain
// layers. Layers are applied in order with OCI whiteouts (.wh.<name> deletes,
// .wh..wh..opq empties a directory) into one root file system per image.

import { createHash } from "node:crypto";
import { existsSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, dirname, join, normalize } from "node:path";
import * as tar from "tar";
import { normalizeReference } from "./reference.js";
import type { ImageConfig, ImageStore, StoredImage } from "./store.js";

interface Candidate {
  configPath: string;
  layerPaths: string[];
  repoTags: string[];
  repoDigests: string[];
}

/** Unpacks `file` into `store`; returns the images it held. Throws with a clear message on archives it cannot read. */
export async function importArchive(store: ImageStore, file: string): Promise<StoredImage[]> {
  if (!existsSync(file)) throw new Error(`open ${file}: no such file`);
  const work = mkdtempSync(join(store.dir, ".import-"));
  try {
    try {
      await tar.x({ file, cwd: work, strict: true });
    } catch (err) {
      throw new Error(`${file}: not a tar archive (docker save or OCI layout): ${(err as Error).message}`);
    }
    const candidates = existsSync(join(work, "manifest.json")) ? dockerSave(work) : existsSync(join(work, "index.json")) ? ociLayout(work) : undefined;
    if (candidates === undefined) throw new Error(`${file}: neither a docker save archive (manifest.json) nor an OCI layout (index.json)`);
    if (candidates.length === 0) throw new Error(`${file}: the archive names no image`);
    const out: StoredImage[] = [];
    for (const c of candidates) {
      const configBytes = readFileSync(c.configPath);
      const id = `sha256:${createHash("sha256").update(configBytes).digest("hex")}`;
      const parsed = JSON.parse(configBytes.toString("utf8")) as { config?: ImageConfig };
      const staging = store.stagingDir();
      let size = 0;
      for (const layer of c.layerPaths) {
        size += statSync(layer).size;
        await applyLayer(layer, staging);
      }
      out.push(store.add({ id, repoTags: c.repoTags, repoDigests: c.repoDigests, size, config: parsed.config ?? {}, importedAt: new Date().toISOString() }, staging));
    }
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function inside(root: string, rel: string): string {
  const path = normalize(join(root, rel));
  if (path !== root && !path.startsWith(`${root}/`)) throw new Error(`archive path ${JSON.stringify(rel)} leaves the archive`);
  if (!existsSync(path)) throw new Error(`archive lacks ${rel}`);
  return path;
}

function names(refs: string[]): string[] {
  const out: string[] = [];
  for (const r of refs) {
    try {
      out.push(normalizeReference(r));
    } catch {
      // a name we cannot parse is left out; the image stays reachable by ID
    }
  }
  return out;
}

function dockerSave(work: string): Candidate[] {
  const manifest = JSON.parse(readFileSync(join(work, "manifest.json"), "utf8")) as { Config: string; RepoTags?: string[] | null; Layers: string[] }[];
  if (!Array.isArray(manifest)) throw new Error("manifest.json is not a list");
  return manifest.map((m) => ({
    configPath: inside(work, m.Config),
    layerPaths: m.Layers.map((l) => inside(work, l)),
    repoTags: names(m.RepoTags ?? []),
    repoDigests: [],
  }));
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  annotations?: Record<string, string>;
  platform?: { os?: string; architecture?: string };
}

function blob(work: string, digest: string): string {
  const [alg, hex] = digest.split(":");
  return inside(work, join("blobs", alg!, hex!));
}

function ociLayout(work: string): Candidate[] {
  const index = JSON.parse(readFileSync(join(work, "index.json"), "utf8")) as { manifests?: Descriptor[] };
  const out: Candidate[] = [];
  for (const d of index.manifests ?? []) {
    const manifest = resolveManifest(work, d);
    if (manifest === undefined) continue;
    // containerd writes the full name; an OCI ref.name may be only a tag ("latest"), which names no repository.
    const full = d.annotations?.["io.containerd.image.name"];
    const ref = d.annotations?.["org.opencontainers.image.ref.name"];
    const tags = names(full !== undefined ? [full] : ref !== undefined && /[:/]/.test(ref) ? [ref] : []);
    const repo = tags[0]?.replace(/:[^:/]+$/, "");
    out.push({
      configPath: blob(work, manifest.config.digest),
      layerPaths: manifest.layers.map((l) => blob(work, l.digest)),
      repoTags: tags,
      repoDigests: repo === undefined ? [] : [`${repo}@${d.digest}`],
    });
  }
  return out;
}

function resolveManifest(work: string, d: Descriptor): { config: Descriptor; layers: Descriptor[] } | undefined {
  const doc = JSON.parse(readFileSync(blob(work, d.digest), "utf8")) as { manifests?: Descriptor[]; config?: Descriptor; layers?: Descriptor[] };
  if (doc.manifests !== undefined) {
    // An index: take this machine's platform, else the first.
    const arch = process.arch === "x64" ? "amd64" : process.arch;
    const pick = doc.manifests.find((m) => m.platform?.os === "linux" && m.platform.architecture === arch) ?? doc.manifests[0];
    return pick === undefined ? undefined : resolveManifest(work, pick);
  }
  if (doc.config === undefined || doc.layers === undefined) return undefined;
  return { config: doc.config, layers: doc.layers };
}

/** Applies one layer tar (plain or gzip) onto `root`: whiteouts first, then the layer's files. */
export async function applyLayer(layer: string, root: string): Promise<void> {
  const whiteouts: string[] = [];
  await tar.t({ file: layer, onReadEntry: (e) => { if (basename(e.path).startsWith(".wh.")) whiteouts.push(e.path); } });
  for (const w of whiteouts) {
    const dir = join(root, normalize(dirname(w)));
    if (!dir.startsWith(root)) continue;
    const name = basename(w).slice(".wh.".length);
    if (name === ".wh..opq") {
      if (existsSync(dir) && lstatSync(dir).isDirectory()) for (const child of readdirSync(dir)) rmSync(join(dir, child), { recursive: true, force: true });
    } else {
      rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
  // Absolute symlink targets (`bin/sh -> /usr/bin/bash`) are meant inside the container's root; the tar
  // library would make them relative to the link's folder (`usr/bin/bash`), so they are made here as written.
  const absoluteLinks: { path: string; target: string; uid: number | undefined; gid: number | undefined }[] = [];
  await tar.x({
    file: layer, cwd: root, preserveOwner: process.getuid?.() === 0,
    filter: (path, entry) => {
      if (basename(path).startsWith(".wh.")) return false;
      const e = entry as { type?: string; linkpath?: string; uid?: number; gid?: number };
      if (e.type === "SymbolicLink" && e.linkpath?.startsWith("/")) {
        absoluteLinks.push({ path, target: e.linkpath, uid: e.uid, gid: e.gid });
        return false;
      }
      return true;
    },
  });
  for (const link of absoluteLinks) makeLink(root, link.path, link.target, process.getuid?.() === 0 ? link : undefined);
}

/**
 * A symlink at `path` (inside `root`, as the layer names it) to `target`, as
 * the tar library places files: never outside `root`, never through a symlink
 * already there (a layer cannot redirect another entry out of the root).
 */
function makeLink(root: string, path: string, target: string, owner: { uid: number | undefined; gid: number | undefined } | undefined): void {
  const relative = normalize(path).replace(/^\/+/, "");
  if (relative === "" || relative === "." || relative.split("/").includes("..")) return;
  const dest = join(root, relative);
  let parent = root;
  for (const part of dirname(relative).split("/").filter((x) => x !== "" && x !== ".")) {
    parent = join(parent, part);
    if (!existsSync(parent)) mkdirSync(parent);
    else if (!lstatSync(parent).isDirectory()) return;
  }
  const existing = lstatSync(dest, { throwIfNoEntry: false });
  if (existing?.isDirectory()) return;
  if (existing !== undefined) rmSync(dest, { force: true });
  symlinkSync(target, dest);
  if (owner?.uid !== undefined && owner.gid !== undefined) lchownSync(dest, owner.uid, owner.gid);
}
