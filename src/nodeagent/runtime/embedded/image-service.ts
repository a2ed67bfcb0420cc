// The embedded runtime's CRI ImageService over its local image store: images
// imported (`orch images import`) or pulled from registries. Pods starting
// together that ask for one image share one pull. An image neither stored nor
// pullable may still "pull" (absentImages: "host-root"): its containers then
// run on the host's root file system.

import { status as Code } from "@grpc/grpc-js";
import type * as cri from "../../cri/types.js";
import { normalizeReference } from "../images/reference.js";
import { pullImage as pullFromRegistry } from "../images/registry.js";
import type { RegistriesConfig } from "../images/registries.js";
import type { ImageStore, StoredImage } from "../images/store.js";
import { RuntimeError } from "./errors.js";
import { nowNs } from "./records.js";
import { hostRootRefusal } from "./host-root.js";

export interface EmbeddedImageServiceOptions {
  images: ImageStore;
  absentImages: "host-root" | "error";
  /** With host-root: only pulls for sandboxes carrying this annotation set to "true" fall back (host-root.ts). */
  hostRootMarker?: string;
  /** Pull absent images from their registries. */
  pullFromRegistries: boolean;
  insecureRegistries: string[];
  /** Mirrors, credentials and TLS settings per registry (the registries file). */
  registries?: RegistriesConfig;
  /** A running container using the image, if any (such an image is not removed). */
  runningUser: (imageId: string) => string | undefined;
  log: (message: string) => void;
}

export class EmbeddedImageService {
  readonly #o: EmbeddedImageServiceOptions;
  /** Pulls under way, by name and credentials. */
  readonly #pulling = new Map<string, Promise<cri.PullImageResponse>>();

  constructor(options: EmbeddedImageServiceOptions) {
    this.#o = options;
  }

  listImages(req: cri.ListImagesRequest): cri.DeepPartial<cri.ListImagesResponse> {
    const { images } = this.#o;
    const wanted = req.filter?.image?.image ?? "";
    const found = wanted === "" ? images.list() : [images.resolve(wanted)].filter((i): i is StoredImage => i !== undefined);
    return { images: found.map(toCriImage) };
  }

  imageStatus(req: cri.ImageStatusRequest): cri.DeepPartial<cri.ImageStatusResponse> {
    const { images } = this.#o;
    const image = images.resolve(req.image?.image ?? "");
    if (image === undefined) return { image: null, info: {} };
    return { image: toCriImage(image), info: req.verbose ? { info: JSON.stringify({ config: image.config, rootfs: images.rootfs(image.id), importedAt: image.importedAt }) } : {} };
  }

  async pullImage(req: cri.PullImageRequest): Promise<cri.PullImageResponse> {
    const ref = req.image?.image ?? "";
    const present = this.#o.images.resolve(ref);
    if (present !== undefined) return { imageRef: present.id };
    let name: string;
    try {
      name = normalizeReference(ref);
    } catch (err) {
      throw new RuntimeError(Code.INVALID_ARGUMENT, (err as Error).message);
    }
    // Pods that may and may not fall back to the host root do not share a pull.
    const key = JSON.stringify([name, req.auth ?? null, this.#o.hostRootMarker !== undefined && req.sandboxConfig?.annotations?.[this.#o.hostRootMarker] === "true"]);
    let pulling = this.#pulling.get(key);
    if (pulling === undefined) {
      pulling = this.#pullAbsent(ref, name, req.auth ?? null, req.sandboxConfig ?? null).finally(() => this.#pulling.delete(key));
      this.#pulling.set(key, pulling);
    }
    return pulling;
  }

  removeImage(req: cri.RemoveImageRequest): cri.Empty {
    const { images } = this.#o;
    const image = images.resolve(req.image?.image ?? "");
    if (image === undefined) return {}; // idempotent
    const user = this.#o.runningUser(image.id);
    if (user !== undefined) throw new RuntimeError(Code.FAILED_PRECONDITION, `image ${image.id} is in use by running container ${user}`);
    images.remove(image.id);
    return {};
  }

  imageFsInfo(): cri.DeepPartial<cri.ImageFsInfoResponse> {
    const { images } = this.#o;
    const used = images.list().reduce((n, i) => n + i.size, 0);
    return { imageFilesystems: [{ timestamp: nowNs(), fsId: { mountpoint: images.dir }, usedBytes: { value: used }, inodesUsed: { value: 0 } }], containerFilesystems: [] };
  }

  async #pullAbsent(ref: string, name: string, auth: cri.PullImageRequest["auth"], sandbox: cri.PodSandboxConfig | null): Promise<cri.PullImageResponse> {
    let failure = "pulling from registries is turned off";
    if (this.#o.pullFromRegistries) {
      try {
        const image = await pullFromRegistry(this.#o.images, name, {
          insecure: this.#o.insecureRegistries,
          ...(this.#o.registries ? { registries: this.#o.registries } : {}),
          log: this.#o.log,
          ...(auth ? { credentials: { username: auth.username, password: auth.password, auth: auth.auth, registryToken: auth.registryToken } } : {}),
        });
        return { imageRef: image.id };
      } catch (err) {
        failure = (err as Error).message;
      }
    }
    if (this.#o.absentImages === "host-root") {
      const refused = hostRootRefusal(this.#o.hostRootMarker, ref, sandbox);
      if (refused !== undefined) throw new RuntimeError(Code.FAILED_PRECONDITION, `failed to pull image ${JSON.stringify(ref)}: ${failure}; ${refused}`);
      this.#o.log(`image ${name} could not be pulled (${failure}): its containers run on the host's root file system`);
      return { imageRef: name };
    }
    throw new RuntimeError(Code.UNKNOWN, `failed to pull image "${ref}": ${failure}; to run it without a registry, import it with "orch images import FILE" (docker save or OCI archive)`);
  }
}

function toCriImage(i: StoredImage): cri.DeepPartial<cri.Image> {
  const user = i.config.User ?? "";
  const uid = /^\d+/.test(user) ? { value: Number(user.split(":")[0]) } : null;
  return { id: i.id, repoTags: i.repoTags, repoDigests: i.repoDigests, size: i.size, uid, username: uid === null ? user.split(":")[0] : "", spec: { image: i.id }, pinned: false };
}
