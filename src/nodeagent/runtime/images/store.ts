// The embedded runtime's image store: one directory per image under
// <root>/images/<config digest hex>/ holding image.json (names, size, the OCI
// config) and rootfs/ (the layers applied in order). Disk is the only state,
// so `orch images import` and a running runtime share it without a daemon.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isImageId, normalizeReference } from "./reference.js";

/** The parts of an OCI image config a runtime uses. */
export interface ImageConfig {
  Env?: string[];
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  WorkingDir?: string;
  User?: string;
}

export interface StoredImage {
  /** `sha256:<hex of the config blob>`. */
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** Bytes of the layer blobs as imported. */
  size: number;
  config: ImageConfig;
  importedAt: string;
}

export class ImageStore {
  readonly #dir: string;

  constructor(root: string) {
    this.#dir = join(root, "images");
    mkdirSync(this.#dir, { recursive: true });
  }

  get dir(): string {
    return this.#dir;
  }

  list(): StoredImage[] {
    const out: StoredImage[] = [];
    for (const name of readdirSync(this.#dir)) {
      if (!/^[0-9a-f]{64}$/.test(name)) continue;
      const image = this.#read(name);
      if (image !== undefined) out.push(image);
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Finds an image by ID, unambiguous ID prefix, tag or digest reference; undefined when absent. */
  resolve(ref: string): StoredImage | undefined {
    if (ref === "") return undefined;
    if (isImageId(ref)) return this.#read(ref.slice("sha256:".length));
    const images = this.list();
    const hex = ref.startsWith("sha256:") ? ref.slice(7) : ref;
    if (/^[0-9a-f]{12,64}$/.test(hex)) {
      const byPrefix = images.filter((i) => i.id.slice(7).startsWith(hex));
      if (byPrefix.length === 1) return byPrefix[0];
    }
    let name: string;
    try {
      name = normalizeReference(ref);
    } catch {
      return undefined;
    }
    return images.find((i) => i.repoTags.includes(name) || i.repoDigests.includes(name));
  }

  rootfs(id: string): string {
    return join(this.#dir, id.replace(/^sha256:/, ""), "rootfs");
  }

  /**
   * Adds an image whose rootfs was prepared in `staging` (renamed into place);
   * its tags move away from any image that held them, as with docker load.
   */
  add(image: StoredImage, staging: string): StoredImage {
    const hex = image.id.slice(7);
    const dir = join(this.#dir, hex);
    const existing = this.#read(hex);
    if (existing !== undefined) {
      rmSync(staging, { recursive: true, force: true }); // same config digest: same content
      image = { ...existing, repoTags: union(existing.repoTags, image.repoTags), repoDigests: union(existing.repoDigests, image.repoDigests) };
    } else {
      mkdirSync(dir, { recursive: true });
      rmSync(join(dir, "rootfs"), { recursive: true, force: true });
      renameSync(staging, join(dir, "rootfs"));
    }
    for (const other of this.list()) {
      if (other.id === image.id) continue;
      const kept = other.repoTags.filter((t) => !image.repoTags.includes(t));
      if (kept.length !== other.repoTags.length) this.#write({ ...other, repoTags: kept });
    }
    this.#write(image);
    return image;
  }

  /** Removes an image; false when there was none. */
  remove(ref: string): boolean {
    const image = this.resolve(ref);
    if (image === undefined) return false;
    const dir = join(this.#dir, image.id.slice(7));
    // Rename first so a reader never sees half an image.
    const doomed = join(this.#dir, `.removing-${image.id.slice(7)}-${process.pid}`);
    renameSync(dir, doomed);
    rmSync(doomed, { recursive: true, force: true });
    return true;
  }

  /** A fresh directory under the store for unpacking (same file system, so add() can rename). */
  stagingDir(): string {
    const dir = join(this.#dir, `.staging-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  #read(hex: string): StoredImage | undefined {
    const file = join(this.#dir, hex, "image.json");
    if (!existsSync(file)) return undefined;
    try {
      return JSON.parse(readFileSync(file, "utf8")) as StoredImage;
    } catch {
      return undefined;
    }
  }

  #write(image: StoredImage): void {
    const file = join(this.#dir, image.id.slice(7), "image.json");
    writeFileSync(`${file}.tmp`, JSON.stringify(image, null, 2));
    renameSync(`${file}.tmp`, file);
  }
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}
