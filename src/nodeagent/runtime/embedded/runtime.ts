// The embedded runtime's CRI surface (seed 001, "What the service does" 4):
// sandboxes and containers as upstream runtimes answer for them, their records
// kept on disk (records.ts). The work behind the calls has its own modules:
// running containers under their shims (supervisor.ts), what a container runs
// (container-process.ts), ExecSync (exec-sync.ts), stats (stats.ts) and images
// (image-service.ts). A sandbox is a record plus its /etc files and network
// namespace; a restarted runtime re-adopts the containers still running.

import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
// A sandbox's files are removed off the event loop: other pods' starts go on meanwhile.
import { rm } from "node:fs/promises";
import { availableParallelism, hostname as osHostname } from "node:os";
import { join } from "node:path";
import { status as Code } from "@grpc/grpc-js";
import type * as cri from "../../cri/types.js";
import { ImageStore } from "../images/store.js";
import { Cgroups } from "./cgroups.js";
import { checkpointContainer } from "./checkpoint.js";
import { containerProcess } from "./container-process.js";
import { containerItem, containerStatus, matches, sandboxItem, sandboxStatus } from "./cri-messages.js";
import { RuntimeError } from "./errors.js";
import { execSync } from "./exec-sync.js";
import { hostIp } from "./host.js";
import { EmbeddedImageService } from "./image-service.js";
import { containerCgroup, RuntimeLayout, sandboxCgroup } from "./layout.js";
import { probeIsolation, type Isolation } from "./launcher.js";
import { PodNetwork, type PodNetworkOptions } from "./network.js";
import { nowNs, RecordStore, type ContainerRecord, type SandboxRecord } from "./records.js";
import { writeSandboxFiles } from "./sandbox-files.js";
import { seccompFilter, seccompSupport } from "./seccomp.js";
import { hostRootRefusal } from "./host-root.js";
import { installShim } from "./shim.js";
import type { RegistriesConfig } from "../images/registries.js";
import { StartLimit } from "./start-limit.js";
import { RuntimeStats } from "./stats.js";
import { ContainerSupervisor } from "./supervisor.js";

export const RUNTIME_NAME = "orch-embedded";
export const RUNTIME_VERSION = "0.1.0";

export interface EmbeddedRuntimeOptions {
  /** The runtime's directory: images/, state/, containers/, sandboxes/. */
  root: string;
  /**
   * What PullImage does for an image neither in the store nor pullable (no
   * registry reachable): "host-root" answers success and the container runs
   * on the host's root file system; "error" fails the pull.
   */
  absentImages?: "host-root" | "error";
  /**
   * With "host-root": only pods whose sandbox carries this annotation set to
   * "true" (the agent passes `<key domain>/host-root`, hostRootAnnotation) may
   * fall back; others fail the pull and the create with a reason saying so.
   * Unset: every pod may (the runtime's own default, for CRI clients that know
   * no marker).
   */
  hostRootMarker?: string;
  /** Host paths hidden from host-root containers (the agent's and the server's data, credentials): a directory gets an empty read-only tmpfs, a file /dev/null. */
  hostRootMasks?: string[];
  /** Pull absent images from their registries (default true); where none is reachable, absentImages decides. */
  pullFromRegistries?: boolean;
  /** Registry hosts (host[:port]) spoken to over plain HTTP; loopback ones always are. */
  insecureRegistries?: string[];
  /** Mirrors, credentials and TLS settings per registry (loadRegistriesConfig). */
  registries?: RegistriesConfig;
  /** Pod network settings, or false to put every pod on the host network. */
  network?: PodNetworkOptions | false;
  /** false runs containers as plain host processes even where namespaces are available. */
  namespaces?: boolean;
  log?: (message: string) => void;
}

/** What close() does with the containers still running. */
export interface CloseOptions {
  /** Kill them (default true); false leaves them running under their shims for the next runtime on this root to re-adopt. */
  stopContainers?: boolean;
}

const newId = (): string => randomBytes(32).toString("hex");
const notFound = (what: string, id: string): RuntimeError => new RuntimeError(Code.NOT_FOUND, `an error occurred when try to find ${what} "${id}": not found`);

export class EmbeddedRuntimeService {
  readonly images: ImageStore;
  readonly isolation: Isolation;
  readonly cgroups: Cgroups;
  readonly #layout: RuntimeLayout;
  /** The pod network, or why pods use the host's. */
  readonly #network: PodNetwork | string;
  readonly #log: (message: string) => void;
  readonly #sandboxes: RecordStore<SandboxRecord>;
  readonly #containers: RecordStore<ContainerRecord>;
  /** Pod networks being wired and shims starting, at once: two per core (see start-limit.ts). */
  readonly #startLimit = new StartLimit(availableParallelism() * 2);
  readonly #supervisor: ContainerSupervisor;
  readonly #stats: RuntimeStats;
  readonly #imageService: EmbeddedImageService;
  readonly #hostRootMarker: string | undefined;
  #podCidr = "";

  constructor(options: EmbeddedRuntimeOptions) {
    this.#hostRootMarker = options.hostRootMarker;
    const root = options.root;
    this.#layout = new RuntimeLayout(root);
    this.#log = options.log ?? (() => {});
    mkdirSync(join(root, "containers"), { recursive: true });
    const shim = installShim(root);
    this.images = new ImageStore(root);
    this.isolation = options.namespaces === false
      ? { namespaces: false, overlay: false, notes: ["namespaces turned off by configuration: containers run as plain host processes"] }
      : probeIsolation(root);
    this.cgroups = new Cgroups();
    this.#network = options.network === false
      ? "turned off by configuration"
      : !this.isolation.namespaces
        ? "containers run without namespaces"
        : PodNetwork.probe(options.network ?? {}, root);
    if (typeof this.#network !== "string") {
      void this.#network.collectOrphans().then((n) => n > 0 && this.#log(`released the networks of ${n} pods whose runtime is gone`), () => {});
    }
    this.#sandboxes = new RecordStore(join(root, "state", "sandboxes"));
    this.#containers = new RecordStore(join(root, "state", "containers"));
    this.#imageService = new EmbeddedImageService({
      images: this.images,
      absentImages: options.absentImages ?? "host-root",
      ...(options.hostRootMarker !== undefined ? { hostRootMarker: options.hostRootMarker } : {}),
      pullFromRegistries: options.pullFromRegistries ?? true,
      insecureRegistries: options.insecureRegistries ?? [],
      ...(options.registries ? { registries: options.registries } : {}),
      runningUser: (imageId) => this.#containers.values().find((c) => c.imageId === imageId && c.state === "CONTAINER_RUNNING")?.id,
      log: this.#log,
    });
    this.#stats = new RuntimeStats({
      cgroups: this.cgroups,
      layout: this.#layout,
      sandbox: (id) => this.#sandbox(id),
      running: (sandboxId) => this.#containers.values().filter((c) => c.podSandboxId === sandboxId && c.state === "CONTAINER_RUNNING"),
    });
    this.#supervisor = new ContainerSupervisor({ containers: this.#containers, sandboxes: this.#sandboxes, images: this.images, cgroups: this.cgroups, isolation: this.isolation, layout: this.#layout, shim, startLimit: this.#startLimit, log: this.#log, hostRootMasks: options.hostRootMasks ?? [] });
    this.#supervisor.recover();
  }

  /** Kills every running container (their exit is recorded) and waits for them, or leaves them running (stopContainers: false). */
  async close(options: CloseOptions = {}): Promise<void> {
    await this.#supervisor.close(options.stopContainers ?? true);
    // The exits just recorded are written off the event loop: finish them, so nothing writes under the root after close.
    await this.settled().catch((err: Error) => this.#log(`closing: a record could not be written: ${err.message}`));
  }

  /** How many containers run now. */
  get runningContainers(): number {
    return this.#supervisor.count;
  }

  /** Resolves once every record written so far is on disk (the server answers each call after it). */
  async settled(): Promise<void> {
    await Promise.all([this.#sandboxes.settled(), this.#containers.settled()]);
  }

  // ---- version and status ----

  version(): cri.VersionResponse {
    return { version: "0.1.0", runtimeName: RUNTIME_NAME, runtimeVersion: RUNTIME_VERSION, runtimeApiVersion: "v1" };
  }

  status(req: cri.StatusRequest): cri.DeepPartial<cri.StatusResponse> {
    const conditions: cri.RuntimeCondition[] = [
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      typeof this.#network === "string"
        ? { type: "NetworkReady", status: true, reason: "HostNetwork", message: `every pod uses the host network: ${this.#network}` }
        : { type: "NetworkReady", status: true, reason: "", message: this.#network.description },
      // Informative (seed 001, "Seccomp settings"): whether profiles are installed as filters here.
      seccompSupport(),
      { type: "Isolated", status: this.isolation.namespaces, reason: this.isolation.namespaces ? "Namespaces" : "NoNamespaces", message: this.isolation.notes.join("; ") },
    ];
    const info: Record<string, string> = req.verbose
      ? { isolation: JSON.stringify(this.isolation), cgroups: JSON.stringify({ version: this.cgroups.version ?? null, unavailable: this.cgroups.unavailable ?? null }), root: JSON.stringify(this.#layout.root), podCIDR: JSON.stringify(this.#podCidr) }
      : {};
    return { status: { conditions }, info, runtimeHandlers: [{ name: "", features: { recursiveReadOnlyMounts: false, userNamespaces: false } }], features: { supplementalGroupsPolicy: false } };
  }

  // ---- sandboxes ----

  async runPodSandbox(req: cri.RunPodSandboxRequest): Promise<cri.RunPodSandboxResponse> {
    const config = req.config;
    if (config?.metadata == null || config.metadata.name === "" || config.metadata.uid === "") throw new RuntimeError(Code.INVALID_ARGUMENT, "sandbox config must include metadata with name and uid");
    if (req.runtimeHandler !== "") throw new RuntimeError(Code.NOT_FOUND, `no runtime for "${req.runtimeHandler}" is configured`);
    const id = newId();
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === "NODE" || typeof this.#network === "string";
    const hostname = config.hostname !== "" ? config.hostname : osHostname();
    let ip = hostIp();
    let netns = "";
    if (!hostNetwork) {
      try {
        ({ ip, netns } = await this.#startLimit.run(() => (this.#network as PodNetwork).attach(id, config.portMappings)));
      } catch (err) {
        // Keep the pod running: the host network is what the runtime offers without CNI anyway.
        this.#log(`sandbox ${config.metadata.name}: pod network failed, using the host network: ${(err as Error).message}`);
      }
    }
    await writeSandboxFiles(this.#layout.sandboxDir(id), { hostname, ip, dns: config.dnsConfig, logDirectory: config.logDirectory });
    this.#sandboxes.save({ id, config, state: "SANDBOX_READY", createdAt: nowNs(), runtimeHandler: req.runtimeHandler, ip, hostname, netns });
    return { podSandboxId: id };
  }

  async stopPodSandbox(req: cri.StopPodSandboxRequest): Promise<cri.Empty> {
    const sandbox = this.#sandboxes.get(req.podSandboxId);
    if (sandbox === undefined) return {}; // idempotent, as upstream
    await Promise.all(this.#containers.values().filter((c) => c.podSandboxId === sandbox.id).map((c) => this.#supervisor.kill(c.id, 0)));
    if (sandbox.state !== "SANDBOX_NOTREADY") {
      // As upstream: stopping a sandbox gives back its address and ports.
      if (sandbox.netns && typeof this.#network !== "string") await this.#network.release(sandbox.id, sandbox.config.portMappings).catch(() => {});
      this.#sandboxes.save({ ...sandbox, state: "SANDBOX_NOTREADY" });
    }
    return {};
  }

  async removePodSandbox(req: cri.RemovePodSandboxRequest): Promise<cri.Empty> {
    const sandbox = this.#sandboxes.get(req.podSandboxId);
    if (sandbox === undefined) return {};
    for (const c of this.#containers.values().filter((c) => c.podSandboxId === sandbox.id)) await this.removeContainer({ containerId: c.id });
    if (sandbox.netns && typeof this.#network !== "string") await this.#network.detach(sandbox.id, sandbox.config.portMappings);
    // The runtime's own per-pod cgroup (a cgroup parent from the agent is the agent's to remove).
    if (!sandbox.config.linux?.cgroupParent) this.cgroups.remove(sandboxCgroup(sandbox.id));
    await rm(this.#layout.sandboxDir(sandbox.id), { recursive: true, force: true });
    this.#sandboxes.delete(sandbox.id);
    return {};
  }

  podSandboxStatus(req: cri.PodSandboxStatusRequest): cri.DeepPartial<cri.PodSandboxStatusResponse> {
    return sandboxStatus(this.#sandbox(req.podSandboxId), req.verbose);
  }

  listPodSandbox(req: cri.ListPodSandboxRequest): cri.DeepPartial<cri.ListPodSandboxResponse> {
    const f = req.filter;
    const items = this.#sandboxes.values()
      .filter((s) => !f || ((f.id === "" || s.id.startsWith(f.id)) && (f.state == null || s.state === f.state.state) && matches(s.config.labels, f.labelSelector)))
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(sandboxItem);
    return { items };
  }

  // ---- containers ----

  createContainer(req: cri.CreateContainerRequest): cri.CreateContainerResponse {
    const sandbox = this.#sandbox(req.podSandboxId);
    if (sandbox.state !== "SANDBOX_READY") throw new RuntimeError(Code.FAILED_PRECONDITION, `sandbox ${sandbox.id} is not ready`);
    const config = req.config;
    if (config?.metadata == null || config.metadata.name === "") throw new RuntimeError(Code.INVALID_ARGUMENT, "container config must include metadata with a name");
    const { name, attempt } = config.metadata;
    const clash = this.#containers.values().find((c) => c.podSandboxId === sandbox.id && c.config.metadata?.name === name && c.config.metadata.attempt === attempt);
    if (clash !== undefined) throw new RuntimeError(Code.ALREADY_EXISTS, `container "${name}" attempt ${attempt} in sandbox ${sandbox.id} is reserved for ${clash.id}`);
    const notes: string[] = [];
    const security = config.linux?.securityContext ?? null;
    const filter = seccompFilter(security, notes);
    if (security?.namespaceOptions?.pid === "POD") notes.push("a PID namespace shared by the pod is not offered: the container has its own");
    if (security?.namespaceOptions?.pid === "TARGET") {
      const targetId = security.namespaceOptions.targetId;
      const target = this.#containers.get(targetId);
      if (target === undefined || target.podSandboxId !== sandbox.id) throw new RuntimeError(Code.NOT_FOUND, `target container ${targetId} is not in sandbox ${sandbox.id}`);
      if (!this.isolation.namespaces) notes.push("without namespaces every container sees the host's processes, the target's among them");
    }
    const imageName = config.image?.image ?? "";
    const image = this.images.resolve(imageName);
    if (image === undefined) {
      const refused = hostRootRefusal(this.#hostRootMarker, imageName, sandbox.config);
      if (refused !== undefined) throw new RuntimeError(Code.FAILED_PRECONDITION, refused);
    }
    if (image === undefined) notes.push(`image ${JSON.stringify(imageName)} is not in the embedded runtime's image store: the command runs on the host's root file system`);
    const process = containerProcess(config, image, image === undefined ? "/" : this.images.rootfs(image.id), security, notes);
    const id = newId();
    if (filter !== undefined) {
      mkdirSync(this.#layout.containerDir(id), { recursive: true });
      writeFileSync(join(this.#layout.containerDir(id), "seccomp.bpf"), filter);
    }
    const logPath = sandbox.config.logDirectory !== "" && config.logPath !== "" ? join(sandbox.config.logDirectory, config.logPath) : "";
    this.#containers.save({
      id,
      podSandboxId: sandbox.id,
      config,
      state: "CONTAINER_CREATED",
      createdAt: nowNs(),
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      reason: "",
      message: notes.join("; "),
      image: imageName,
      imageId: image?.id ?? "",
      logPath,
      resources: config.linux?.resources ?? null,
      process,
      pid: 0,
      pidStart: "",
      notes,
      ...(filter !== undefined ? { seccomp: true } : {}),
    });
    return { containerId: id };
  }

  async startContainer(req: cri.StartContainerRequest): Promise<cri.Empty> {
    const c = this.#container(req.containerId);
    if (c.state !== "CONTAINER_CREATED") throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is in ${c.state} state, not CONTAINER_CREATED`);
    const sandbox = this.#sandbox(c.podSandboxId);
    if (sandbox.state !== "SANDBOX_READY") throw new RuntimeError(Code.FAILED_PRECONDITION, `sandbox ${sandbox.id} is not ready`);
    const image = c.imageId !== "" ? this.images.resolve(c.imageId) : undefined;
    if (c.imageId !== "" && image === undefined) throw new RuntimeError(Code.FAILED_PRECONDITION, `image ${c.imageId} of container ${c.id} was removed`);
    await this.#supervisor.start(c, sandbox, image);
    return {};
  }

  async stopContainer(req: cri.StopContainerRequest): Promise<cri.Empty> {
    this.#container(req.containerId);
    await this.#supervisor.kill(req.containerId, Math.max(0, req.timeout));
    return {};
  }

  async removeContainer(req: cri.RemoveContainerRequest): Promise<cri.Empty> {
    const c = this.#containers.get(req.containerId);
    if (c === undefined) return {};
    await this.#supervisor.kill(c.id, 0);
    rmSync(this.#layout.containerDir(c.id), { recursive: true, force: true });
    this.#containers.delete(c.id);
    this.#stats.forget(c.id);
    return {};
  }

  listContainers(req: cri.ListContainersRequest): cri.DeepPartial<cri.ListContainersResponse> {
    const f = req.filter;
    const containers = this.#containers.values()
      .filter((c) => !f || ((f.id === "" || c.id.startsWith(f.id)) && (f.podSandboxId === "" || c.podSandboxId === f.podSandboxId) && (f.state == null || c.state === f.state.state) && matches(c.config.labels, f.labelSelector)))
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(containerItem);
    return { containers };
  }

  containerStatus(req: cri.ContainerStatusRequest): cri.DeepPartial<cri.ContainerStatusResponse> {
    return containerStatus(this.#container(req.containerId), req.verbose, this.isolation);
  }

  updateContainerResources(req: cri.UpdateContainerResourcesRequest): cri.Empty {
    const c = this.#container(req.containerId);
    if (req.linux === null) return {};
    if (c.state === "CONTAINER_RUNNING") {
      const notes = this.cgroups.update(containerCgroup(this.#sandbox(c.podSandboxId), c), req.linux);
      if (notes.length > 0) throw new RuntimeError(Code.UNKNOWN, `failed to update resources of container ${c.id}: ${notes.join("; ")}`);
    }
    this.#containers.save({ ...c, resources: req.linux });
    return {};
  }

  /**
   * The shim reopens the log path by itself when the file there is no longer
   * the one it writes (rotated away); creating the new file here makes it
   * exist once the call returns, as containerd's reopen does.
   */
  reopenContainerLog(req: cri.ReopenContainerLogRequest): cri.Empty {
    const c = this.#container(req.containerId);
    if (c.state !== "CONTAINER_RUNNING" || !this.#supervisor.isRunning(c.id)) throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is not running`);
    if (c.logPath !== "") appendFileSync(c.logPath, "");
    return {};
  }

  execSync(req: cri.ExecSyncRequest): Promise<cri.ExecSyncResponse> {
    return execSync(this.#container(req.containerId), this.isolation, req);
  }

  containerStats(req: cri.ContainerStatsRequest): cri.DeepPartial<cri.ContainerStatsResponse> {
    return { stats: this.#stats.container(this.#container(req.containerId)) };
  }

  listContainerStats(req: cri.ListContainerStatsRequest): cri.DeepPartial<cri.ListContainerStatsResponse> {
    const f = req.filter;
    const stats = this.#containers.values()
      .filter((c) => c.state === "CONTAINER_RUNNING")
      .filter((c) => !f || ((f.id === "" || c.id.startsWith(f.id)) && (f.podSandboxId === "" || c.podSandboxId === f.podSandboxId) && matches(c.config.labels, f.labelSelector)))
      .map((c) => this.#stats.container(c));
    return { stats };
  }

  /** The node's pod CIDR from the agent; recorded (Status info) but the pod network keeps its configured subnet. */
  updateRuntimeConfig(req: cri.UpdateRuntimeConfigRequest): cri.Empty {
    this.#podCidr = req.runtimeConfig?.networkConfig?.podCidr ?? "";
    return {};
  }

  runtimeConfig(): cri.RuntimeConfigResponse {
    return { linux: { cgroupDriver: "CGROUPFS" } };
  }

  podSandboxStats(req: cri.PodSandboxStatsRequest): cri.DeepPartial<cri.PodSandboxStatsResponse> {
    return { stats: this.#stats.pod(this.#sandbox(req.podSandboxId)) };
  }

  listPodSandboxStats(req: cri.ListPodSandboxStatsRequest): cri.DeepPartial<cri.ListPodSandboxStatsResponse> {
    const f = req.filter;
    const stats = this.#sandboxes.values()
      .filter((s) => s.state === "SANDBOX_READY" && (!f || ((f.id === "" || s.id.startsWith(f.id)) && matches(s.config.labels, f.labelSelector))))
      .map((s) => this.#stats.pod(s));
    return { stats };
  }

  /** No streaming server: the agent reaches a container's stdin and terminal through its shim's attach socket (ContainerStatus info `attach.socket`). */
  attach(req: cri.AttachRequest): cri.AttachResponse {
    this.#container(req.containerId);
    throw new RuntimeError(Code.UNIMPLEMENTED, "the embedded runtime serves no streaming URL: attach through the attach socket its verbose ContainerStatus names");
  }

  /** Freezes the container, writes its memory, metadata and file system changes to req.location (checkpoint.ts), thaws it. */
  async checkpointContainer(req: cri.CheckpointContainerRequest): Promise<cri.Empty> {
    const c = this.#container(req.containerId);
    const sandbox = this.#sandbox(c.podSandboxId);
    if (this.cgroups.version === undefined) throw new RuntimeError(Code.FAILED_PRECONDITION, `cannot checkpoint container ${c.id}: no cgroup freezer (${this.cgroups.unavailable ?? "cgroups unavailable"})`);
    await checkpointContainer({ container: c, cgroup: containerCgroup(sandbox, c), cgroups: this.cgroups, containerDir: this.#layout.containerDir(c.id), location: req.location, timeout: Number(req.timeout) });
    return {};
  }

  // ---- images (image-service.ts) ----

  listImages(req: cri.ListImagesRequest): cri.DeepPartial<cri.ListImagesResponse> {
    return this.#imageService.listImages(req);
  }

  imageStatus(req: cri.ImageStatusRequest): cri.DeepPartial<cri.ImageStatusResponse> {
    return this.#imageService.imageStatus(req);
  }

  pullImage(req: cri.PullImageRequest): Promise<cri.PullImageResponse> {
    return this.#imageService.pullImage(req);
  }

  removeImage(req: cri.RemoveImageRequest): cri.Empty {
    return this.#imageService.removeImage(req);
  }

  imageFsInfo(): cri.DeepPartial<cri.ImageFsInfoResponse> {
    return this.#imageService.imageFsInfo();
  }

  // ---- records ----

  #sandbox(id: string): SandboxRecord {
    const s = this.#sandboxes.get(id);
    if (s === undefined) throw notFound("sandbox", id);
    return s;
  }

  #container(id: string): ContainerRecord {
    const c = this.#containers.get(id);
    if (c === undefined) throw notFound("container", id);
    return c;
  }
}
