// The embedded runtime's CRI behaviour: sandboxes, containers, exec, stats and
// images, as upstream runtimes answer them (seed 001, "What the service does"
// 4). Containers are host processes started by launcher.ts under a shim that
// outlives the runtime: a restarted runtime re-adopts the ones still running.
// A sandbox is a record plus its /etc files and network namespace.

import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, hostname as osHostname } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { status as Code } from "@grpc/grpc-js";
import { nowNanos } from "../../cri/log-format.js";
import type * as cri from "../../cri/types.js";
import { ImageStore, type StoredImage } from "../images/store.js";
import { normalizeReference } from "../images/reference.js";
import { pullImage as pullFromRegistry } from "../images/registry.js";
import { Cgroups } from "./cgroups.js";
// Sandbox files are written and removed off the event loop: other pods' starts go on meanwhile.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { commandStarted, execArgv, launch, probeIsolation, type Isolation } from "./launcher.js";
import { RuntimeError } from "./errors.js";
import { PodNetwork, type PodNetworkOptions } from "./network.js";
import { diskUsage, hostIp, lookupUser, missingExecutable, netDev, procStart, procUsage, signalNumber } from "./host.js";
import { StartLimit } from "./start-limit.js";
import { RecordStore, type ContainerRecord, type SandboxRecord } from "./records.js";
import { seccompFilter, seccompSupport } from "./seccomp.js";
import { installShim, recordedExit } from "./shim.js";

export const RUNTIME_NAME = "orch-embedded";
export const RUNTIME_VERSION = "0.1.0";
const DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Upstream caps ExecSync output at 16 MiB per stream (CVE-2022-1708). */
const EXEC_OUTPUT_CAP = 16 * 1024 * 1024;
/** How often the runtime looks whether a container it did not start (re-adopted) has ended. */
const ADOPTED_POLL_MS = 250;


export interface EmbeddedRuntimeOptions {
  /** The runtime's directory: images/, state/, containers/, sandboxes/. */
  root: string;
  /**
   * What PullImage does for an image neither in the store nor pullable (no
   * registry reachable): "host-root" answers success and the container runs
   * on the host's root file system; "error" fails the pull.
   */
  absentImages?: "host-root" | "error";
  /** Pull absent images from their registries (default true); where none is reachable, absentImages decides. */
  pullFromRegistries?: boolean;
  /** Registry hosts (host[:port]) spoken to over plain HTTP; loopback ones always are. */
  insecureRegistries?: string[];
  /** Pod network settings, or false to put every pod on the host network. */
  network?: PodNetworkOptions | false;
  /** false runs containers as plain host processes even where namespaces are available. */
  namespaces?: boolean;
  log?: (message: string) => void;
}

interface Running {
  /** Resolves once the container's exit is recorded. */
  exited: Promise<void>;
  oomBefore: number;
}

/** What close() does with the containers still running. */
export interface CloseOptions {
  /** Kill them (default true); false leaves them running under their shims for the next runtime on this root to re-adopt. */
  stopContainers?: boolean;
}

// Nanoseconds since the epoch (as a double: exact to a few hundred ns, plenty for CRI timestamps).
const now = (): number => Number(nowNanos());
const newId = (): string => randomBytes(32).toString("hex");
const notFound = (what: string, id: string): RuntimeError => new RuntimeError(Code.NOT_FOUND, `an error occurred when try to find ${what} "${id}": not found`);

export class EmbeddedRuntimeService {
  readonly images: ImageStore;
  readonly isolation: Isolation;
  readonly cgroups: Cgroups;
  readonly #root: string;
  readonly #absentImages: "host-root" | "error";
  readonly #pull: boolean;
  /** The pod network, or why pods use the host's. */
  readonly #network: PodNetwork | string;
  readonly #insecureRegistries: string[];
  readonly #log: (message: string) => void;
  readonly #sandboxes: RecordStore<SandboxRecord>;
  readonly #containers: RecordStore<ContainerRecord>;
  readonly #running = new Map<string, Running>();
  readonly #cpuSamples = new Map<string, { at: number; nanos: number }>();
  readonly #starting = new Set<string>();
  /** Pod networks being wired and shims starting, at once: two per core (see start-limit.ts). */
  readonly #startLimit = new StartLimit(availableParallelism() * 2);
  /** Pulls under way, by name and credentials: pods starting together that ask for one image share one pull. */
  readonly #pulling = new Map<string, Promise<cri.PullImageResponse>>();
  readonly #shim: string;
  /** Containers whose shim is not our child (re-adopted, or their shim died first), polled for their end. */
  readonly #polled = new Map<string, () => void>();
  #pollTimer: NodeJS.Timeout | undefined;
  #podCidr = "";

  constructor(options: EmbeddedRuntimeOptions) {
    this.#root = options.root;
    this.#absentImages = options.absentImages ?? "host-root";
    this.#pull = options.pullFromRegistries ?? true;
    this.#insecureRegistries = options.insecureRegistries ?? [];
    this.#log = options.log ?? (() => {});
    mkdirSync(join(this.#root, "containers"), { recursive: true });
    this.#shim = installShim(this.#root);
    this.images = new ImageStore(this.#root);
    this.isolation = options.namespaces === false
      ? { namespaces: false, overlay: false, notes: ["namespaces turned off by configuration: containers run as plain host processes"] }
      : probeIsolation(this.#root);
    this.cgroups = new Cgroups();
    this.#network = options.network === false
      ? "turned off by configuration"
      : !this.isolation.namespaces
        ? "containers run without namespaces"
        : PodNetwork.probe(options.network ?? {}, this.#root);
    if (typeof this.#network !== "string") {
      void this.#network.collectOrphans().then((n) => n > 0 && this.#log(`released the networks of ${n} pods whose runtime is gone`), () => {});
    }
    this.#sandboxes = new RecordStore(join(this.#root, "state", "sandboxes"));
    this.#containers = new RecordStore(join(this.#root, "state", "containers"));
    this.#recover();
  }

  /** Kills every running container (their exit is recorded) and waits for them, or leaves them running (stopContainers: false). */
  async close(options: CloseOptions = {}): Promise<void> {
    if (options.stopContainers ?? true) await Promise.all([...this.#running.keys()].map((id) => this.#kill(id, 0)));
    clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
  }

  /** How many containers run now. */
  get runningContainers(): number {
    return this.#running.size;
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
      ? { isolation: JSON.stringify(this.isolation), cgroups: JSON.stringify({ version: this.cgroups.version ?? null, unavailable: this.cgroups.unavailable ?? null }), root: JSON.stringify(this.#root), podCIDR: JSON.stringify(this.#podCidr) }
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
    const dir = this.#sandboxDir(id);
    const dns = config.dnsConfig;
    const resolv = dns !== null && dns.servers.length > 0
      ? [...(dns.searches.length ? [`search ${dns.searches.join(" ")}`] : []), ...dns.servers.map((s) => `nameserver ${s}`), ...(dns.options.length ? [`options ${dns.options.join(" ")}`] : [])].join("\n") + "\n"
      : existsSync("/etc/resolv.conf") ? readFileSync("/etc/resolv.conf", "utf8") : "";
    await mkdir(dir, { recursive: true });
    await Promise.all([
      writeFile(join(dir, "hostname"), `${hostname}\n`),
      writeFile(join(dir, "hosts"), `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${ip}\t${hostname}\n`),
      writeFile(join(dir, "resolv.conf"), resolv),
      config.logDirectory !== "" ? mkdir(config.logDirectory, { recursive: true }) : undefined,
    ]);
    this.#sandboxes.save({ id, config, state: "SANDBOX_READY", createdAt: now(), runtimeHandler: req.runtimeHandler, ip, hostname, netns });
    return { podSandboxId: id };
  }

  async stopPodSandbox(req: cri.StopPodSandboxRequest): Promise<cri.Empty> {
    const sandbox = this.#sandboxes.get(req.podSandboxId);
    if (sandbox === undefined) return {}; // idempotent, as upstream
    await Promise.all(this.#containers.values().filter((c) => c.podSandboxId === sandbox.id).map((c) => this.#kill(c.id, 0)));
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
    if (!sandbox.config.linux?.cgroupParent) this.cgroups.remove(`orch-embedded/${sandbox.id}`);
    await rm(this.#sandboxDir(sandbox.id), { recursive: true, force: true });
    this.#sandboxes.delete(sandbox.id);
    return {};
  }

  podSandboxStatus(req: cri.PodSandboxStatusRequest): cri.DeepPartial<cri.PodSandboxStatusResponse> {
    const s = this.#sandbox(req.podSandboxId);
    const hostNetwork = s.netns === "";
    return {
      status: {
        id: s.id,
        metadata: s.config.metadata,
        state: s.state,
        createdAt: s.createdAt,
        network: { ip: s.ip, additionalIps: [] },
        linux: { namespaces: { options: { network: hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "CONTAINER" } } },
        labels: s.config.labels,
        annotations: s.config.annotations,
        runtimeHandler: s.runtimeHandler,
      },
      info: req.verbose ? { info: JSON.stringify({ hostNetwork, netns: s.netns, hostname: s.hostname }) } : {},
      containersStatuses: [],
      timestamp: 0,
    };
  }

  listPodSandbox(req: cri.ListPodSandboxRequest): cri.DeepPartial<cri.ListPodSandboxResponse> {
    const f = req.filter;
    const items = this.#sandboxes.values()
      .filter((s) => !f || ((f.id === "" || s.id.startsWith(f.id)) && (f.state == null || s.state === f.state.state) && matches(s.config.labels, f.labelSelector)))
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((s) => ({ id: s.id, metadata: s.config.metadata, state: s.state, createdAt: s.createdAt, labels: s.config.labels, annotations: s.config.annotations, runtimeHandler: s.runtimeHandler }));
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
    if (image === undefined) notes.push(`image ${JSON.stringify(imageName)} is not in the embedded runtime's image store: the command runs on the host's root file system`);
    const process = this.#process(config, image, security, notes);
    const id = newId();
    if (filter !== undefined) {
      mkdirSync(this.#containerDir(id), { recursive: true });
      writeFileSync(join(this.#containerDir(id), "seccomp.bpf"), filter);
    }
    const logPath = sandbox.config.logDirectory !== "" && config.logPath !== "" ? join(sandbox.config.logDirectory, config.logPath) : "";
    this.#containers.save({
      id,
      podSandboxId: sandbox.id,
      config,
      state: "CONTAINER_CREATED",
      createdAt: now(),
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
    if (this.#starting.has(c.id)) throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is already being started`);
    this.#starting.add(c.id);
    try {
      await this.#start(c, sandbox, image);
    } finally {
      this.#starting.delete(c.id);
    }
    return {};
  }

  /** The host PID whose PID namespace `c` joins (TARGET mode): its target must be running then. */
  #pidTarget(c: ContainerRecord): number | undefined {
    const options = c.config.linux?.securityContext?.namespaceOptions;
    if (options?.pid !== "TARGET" || !this.isolation.namespaces) return undefined;
    const target = this.#containers.get(options.targetId);
    if (target?.state !== "CONTAINER_RUNNING" || target.pid === 0) throw new Error(`target container ${options.targetId} is not running`);
    return target.pid;
  }

  async #start(c: ContainerRecord, sandbox: SandboxRecord, image: StoredImage | undefined): Promise<void> {
    const cgroup = this.#cgroupPath(sandbox, c);
    const notes = [...c.notes];
    if (this.cgroups.version !== undefined) {
      for (const n of this.cgroups.create(cgroup, c.resources)) notes.push(`limit not set: ${n}`);
    } else if (c.resources !== null && (c.resources.memoryLimitInBytes > 0 || c.resources.cpuQuota > 0)) {
      notes.push(`limits not applied: ${this.cgroups.unavailable}`);
    }
    if (c.logPath !== "") {
      // The file exists once StartContainer returns, as with containerd; the shim appends to it.
      mkdirSync(dirname(c.logPath), { recursive: true });
      appendFileSync(c.logPath, "");
    }
    const sandboxDir = this.#sandboxDir(sandbox.id);
    // Fail the start, as runc does, when the command is nowhere to be found (a volume may bring it: not checked then).
    const argv0 = c.process.argv[0]!;
    const fromVolume = (c.config.mounts ?? []).some((m) => argv0.startsWith(`${m.containerPath.replace(/\/+$/, "")}/`));
    const missing = fromVolume ? undefined : missingExecutable(image === undefined ? "/" : this.images.rootfs(image.id), argv0, c.process.env.find((e) => e.startsWith("PATH="))?.slice(5) ?? "");
    let launched;
    try {
      if (missing !== undefined) throw new Error(missing);
      const pidTarget = this.#pidTarget(c);
      // A container of a pod already under way goes before sandboxes of pods not yet begun.
      launched = await this.#startLimit.run(() => launch({
        dir: this.#containerDir(c.id),
        shim: this.#shim,
        logPath: c.logPath,
        ...(c.seccomp ? { seccomp: { filterFile: join(this.#containerDir(c.id), "seccomp.bpf"), noNewPrivs: c.config.linux?.securityContext?.noNewPrivs ?? false } } : {}),
        imageRoot: image === undefined ? undefined : this.images.rootfs(image.id),
        argv: c.process.argv,
        env: c.process.env,
        workingDir: c.process.cwd,
        ...(c.process.uid !== undefined ? { uid: c.process.uid, gid: c.process.gid ?? 0 } : {}),
        hostname: sandbox.hostname,
        mounts: (c.config.mounts ?? []).filter((m) => m.hostPath !== "").map((m) => ({ hostPath: m.hostPath, containerPath: m.containerPath, readonly: m.readonly })),
        etcFiles: { hosts: join(sandboxDir, "hosts"), "resolv.conf": join(sandboxDir, "resolv.conf"), hostname: join(sandboxDir, "hostname") },
        cgroupProcs: this.cgroups.procsFiles(cgroup),
        privileged: c.config.linux?.securityContext?.privileged ?? false,
        devices: (c.config.devices ?? []).map((d) => ({ hostPath: d.hostPath, containerPath: d.containerPath })),
        readonlyRoot: c.config.linux?.securityContext?.readonlyRootfs ?? false,
        netns: sandbox.netns,
        ...(pidTarget !== undefined ? { pidTarget } : {}),
        isolation: this.isolation,
      }), { first: true });
    } catch (err) {
      this.cgroups.remove(cgroup);
      const message = `failed to start container ${c.id}: ${(err as Error).message}`;
      this.#containers.save({ ...c, state: "CONTAINER_EXITED", finishedAt: now(), exitCode: 128, reason: "StartError", message });
      throw new RuntimeError(Code.UNKNOWN, message);
    }
    const { exited, pid, shimPid } = launched;
    const running: Running = { exited: Promise.resolve(), oomBefore: this.cgroups.usage(cgroup).oomKills ?? 0 };
    const record = { ...c, state: "CONTAINER_RUNNING" as const, startedAt: now(), pid, pidStart: procStart(pid), shimPid, shimStart: procStart(shimPid), message: notes.join("; "), notes };
    running.exited = exited.then(async ({ code, signal }) => {
      // The shim's status is the container's; a shim killed before recording one leaves the container to be polled.
      const recorded = recordedExit(this.#containerDir(c.id));
      const status = recorded ?? (code !== null ? { code, at: now() } : await this.#poll(record));
      this.#exited(c.id, status, cgroup, running);
    });
    this.#running.set(c.id, running);
    this.#containers.save(record);
    await commandStarted(pid);
  }

  async stopContainer(req: cri.StopContainerRequest): Promise<cri.Empty> {
    this.#container(req.containerId);
    await this.#kill(req.containerId, Math.max(0, req.timeout));
    return {};
  }

  async removeContainer(req: cri.RemoveContainerRequest): Promise<cri.Empty> {
    const c = this.#containers.get(req.containerId);
    if (c === undefined) return {};
    await this.#kill(c.id, 0);
    rmSync(this.#containerDir(c.id), { recursive: true, force: true });
    this.#containers.delete(c.id);
    this.#cpuSamples.delete(c.id);
    return {};
  }

  listContainers(req: cri.ListContainersRequest): cri.DeepPartial<cri.ListContainersResponse> {
    const f = req.filter;
    const containers = this.#containers.values()
      .filter((c) => !f || ((f.id === "" || c.id.startsWith(f.id)) && (f.podSandboxId === "" || c.podSandboxId === f.podSandboxId) && (f.state == null || c.state === f.state.state) && matches(c.config.labels, f.labelSelector)))
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((c) => ({ id: c.id, podSandboxId: c.podSandboxId, metadata: c.config.metadata, image: { image: c.image }, imageRef: c.imageId || c.image, state: c.state, createdAt: c.createdAt, labels: c.config.labels, annotations: c.config.annotations, imageId: c.imageId }));
    return { containers };
  }

  containerStatus(req: cri.ContainerStatusRequest): cri.DeepPartial<cri.ContainerStatusResponse> {
    const c = this.#container(req.containerId);
    return {
      status: {
        id: c.id,
        metadata: c.config.metadata,
        state: c.state,
        createdAt: c.createdAt,
        startedAt: c.startedAt,
        finishedAt: c.finishedAt,
        exitCode: c.exitCode,
        image: { image: c.image },
        imageRef: c.imageId || c.image,
        reason: c.reason,
        message: c.message,
        labels: c.config.labels,
        annotations: c.config.annotations,
        mounts: c.config.mounts,
        logPath: c.logPath,
        resources: c.resources === null ? null : { linux: c.resources },
        imageId: c.imageId,
        user: { linux: { uid: c.process.uid ?? 0, gid: c.process.gid ?? 0, supplementalGroups: [] } },
      },
      info: req.verbose ? { info: JSON.stringify({ pid: c.pid, rootfs: c.imageId === "" ? "host" : "image", isolation: this.isolation, notes: c.notes, process: { argv: c.process.argv, cwd: c.process.cwd }, runtimeSpec: execSpec(c) }) } : {},
    };
  }

  updateContainerResources(req: cri.UpdateContainerResourcesRequest): cri.Empty {
    const c = this.#container(req.containerId);
    if (req.linux === null) return {};
    if (c.state === "CONTAINER_RUNNING") {
      const notes = this.cgroups.update(this.#cgroupPath(this.#sandbox(c.podSandboxId), c), req.linux);
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
    if (c.state !== "CONTAINER_RUNNING" || !this.#running.has(c.id)) throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is not running`);
    if (c.logPath !== "") appendFileSync(c.logPath, "");
    return {};
  }

  execSync(req: cri.ExecSyncRequest): Promise<cri.ExecSyncResponse> {
    const c = this.#container(req.containerId);
    if (c.state !== "CONTAINER_RUNNING") throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is not running (${c.state})`);
    if (req.cmd.length === 0) throw new RuntimeError(Code.INVALID_ARGUMENT, "exec requires a command");
    const argv = execArgv(c.pid, this.isolation, req.cmd);
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        stdio: ["ignore", "pipe", "pipe"],
        env: Object.fromEntries(c.process.env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)])),
        ...(this.isolation.namespaces ? {} : { cwd: existsSync(c.process.cwd) ? c.process.cwd : "/" }),
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const collect = (into: Buffer[]) => {
        let size = 0;
        return (chunk: Buffer): void => {
          if (size >= EXEC_OUTPUT_CAP) return;
          into.push(chunk.subarray(0, EXEC_OUTPUT_CAP - size));
          size += chunk.length;
        };
      };
      child.stdout!.on("data", collect(out));
      child.stderr!.on("data", collect(err));
      let timedOut = false;
      const timer = req.timeout > 0 ? setTimeout(() => { timedOut = true; child.kill("SIGKILL"); }, req.timeout * 1000) : undefined;
      child.once("error", (e) => { clearTimeout(timer); reject(new RuntimeError(Code.UNKNOWN, `exec in container ${c.id}: ${e.message}`)); });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        if (timedOut) return reject(new RuntimeError(Code.DEADLINE_EXCEEDED, `command ${JSON.stringify(req.cmd.join(" "))} timed out after ${req.timeout}s`));
        resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode: code ?? 128 + signalNumber(signal) });
      });
    });
  }

  containerStats(req: cri.ContainerStatsRequest): cri.DeepPartial<cri.ContainerStatsResponse> {
    return { stats: this.#stats(this.#container(req.containerId)) };
  }

  listContainerStats(req: cri.ListContainerStatsRequest): cri.DeepPartial<cri.ListContainerStatsResponse> {
    const f = req.filter;
    const stats = this.#containers.values()
      .filter((c) => c.state === "CONTAINER_RUNNING")
      .filter((c) => !f || ((f.id === "" || c.id.startsWith(f.id)) && (f.podSandboxId === "" || c.podSandboxId === f.podSandboxId) && matches(c.config.labels, f.labelSelector)))
      .map((c) => this.#stats(c));
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
    return { stats: this.#podStats(this.#sandbox(req.podSandboxId)) };
  }

  listPodSandboxStats(req: cri.ListPodSandboxStatsRequest): cri.DeepPartial<cri.ListPodSandboxStatsResponse> {
    const f = req.filter;
    const stats = this.#sandboxes.values()
      .filter((s) => s.state === "SANDBOX_READY" && (!f || ((f.id === "" || s.id.startsWith(f.id)) && matches(s.config.labels, f.labelSelector))))
      .map((s) => this.#podStats(s));
    return { stats };
  }

  checkpointContainer(): never {
    throw new RuntimeError(Code.UNIMPLEMENTED, "the embedded runtime cannot checkpoint containers");
  }

  // ---- images ----

  listImages(req: cri.ListImagesRequest): cri.DeepPartial<cri.ListImagesResponse> {
    const wanted = req.filter?.image?.image ?? "";
    const images = wanted === "" ? this.images.list() : [this.images.resolve(wanted)].filter((i): i is StoredImage => i !== undefined);
    return { images: images.map(toCriImage) };
  }

  imageStatus(req: cri.ImageStatusRequest): cri.DeepPartial<cri.ImageStatusResponse> {
    const image = this.images.resolve(req.image?.image ?? "");
    if (image === undefined) return { image: null, info: {} };
    return { image: toCriImage(image), info: req.verbose ? { info: JSON.stringify({ config: image.config, rootfs: this.images.rootfs(image.id), importedAt: image.importedAt }) } : {} };
  }

  async pullImage(req: cri.PullImageRequest): Promise<cri.PullImageResponse> {
    const ref = req.image?.image ?? "";
    const present = this.images.resolve(ref);
    if (present !== undefined) return { imageRef: present.id };
    let name: string;
    try {
      name = normalizeReference(ref);
    } catch (err) {
      throw new RuntimeError(Code.INVALID_ARGUMENT, (err as Error).message);
    }
    const key = JSON.stringify([name, req.auth ?? null]);
    let pulling = this.#pulling.get(key);
    if (pulling === undefined) {
      pulling = this.#pullAbsent(ref, name, req.auth ?? null).finally(() => this.#pulling.delete(key));
      this.#pulling.set(key, pulling);
    }
    return pulling;
  }

  async #pullAbsent(ref: string, name: string, auth: cri.PullImageRequest["auth"]): Promise<cri.PullImageResponse> {
    let failure = "pulling from registries is turned off";
    if (this.#pull) {
      try {
        const image = await pullFromRegistry(this.images, name, {
          insecure: this.#insecureRegistries,
          ...(auth ? { credentials: { username: auth.username, password: auth.password, auth: auth.auth, registryToken: auth.registryToken } } : {}),
        });
        return { imageRef: image.id };
      } catch (err) {
        failure = (err as Error).message;
      }
    }
    if (this.#absentImages === "host-root") {
      this.#log(`image ${name} could not be pulled (${failure}): its containers run on the host's root file system`);
      return { imageRef: name };
    }
    throw new RuntimeError(Code.UNKNOWN, `failed to pull image "${ref}": ${failure}; to run it without a registry, import it with "orch images import FILE" (docker save or OCI archive)`);
  }

  removeImage(req: cri.RemoveImageRequest): cri.Empty {
    const ref = req.image?.image ?? "";
    const image = this.images.resolve(ref);
    if (image === undefined) return {}; // idempotent
    const user = this.#containers.values().find((c) => c.imageId === image.id && c.state === "CONTAINER_RUNNING");
    if (user !== undefined) throw new RuntimeError(Code.FAILED_PRECONDITION, `image ${image.id} is in use by running container ${user.id}`);
    this.images.remove(image.id);
    return {};
  }

  imageFsInfo(): cri.DeepPartial<cri.ImageFsInfoResponse> {
    const used = this.images.list().reduce((n, i) => n + i.size, 0);
    return { imageFilesystems: [{ timestamp: now(), fsId: { mountpoint: this.images.dir }, usedBytes: { value: used }, inodesUsed: { value: 0 } }], containerFilesystems: [] };
  }

  // ---- internals ----

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

  #sandboxDir(id: string): string {
    return join(this.#root, "sandboxes", id);
  }

  #cgroupPath(sandbox: SandboxRecord, c: ContainerRecord): string {
    const parent = sandbox.config.linux?.cgroupParent ?? "";
    return join(parent !== "" ? parent.replace(/^\/+/, "") : `orch-embedded/${sandbox.id}`, c.id);
  }

  /** The container's own directory: launch scripts, overlay layers, shim log, exit code, seccomp filter. */
  #containerDir(id: string): string {
    return join(this.#root, "containers", id);
  }

  /** The command, environment, directory and user a container runs with (image config under the CRI config, as upstream). */
  #process(config: cri.ContainerConfig, image: StoredImage | undefined, security: cri.LinuxContainerSecurityContext | null, notes: string[]): ContainerRecord["process"] {
    const ic = image?.config ?? {};
    const argv = config.command.length > 0 ? [...config.command, ...config.args] : [...(ic.Entrypoint ?? []), ...(config.args.length > 0 ? config.args : ic.Cmd ?? [])];
    if (argv.length === 0) throw new RuntimeError(Code.INVALID_ARGUMENT, "no command specified");
    const env = new Map<string, string>();
    for (const e of ic.Env ?? [DEFAULT_PATH]) env.set(e.slice(0, e.indexOf("=")), e);
    if (!env.has("PATH")) env.set("PATH", DEFAULT_PATH);
    for (const kv of config.envs) env.set(kv.key, `${kv.key}=${kv.value}`);
    const cwd = config.workingDir || ic.WorkingDir || "/";
    if (!isAbsolute(cwd)) throw new RuntimeError(Code.INVALID_ARGUMENT, `working directory ${JSON.stringify(cwd)} is not absolute`);
    let uid = security?.runAsUser?.value;
    let gid = security?.runAsGroup?.value;
    if (uid === undefined && security?.runAsUsername) {
      const found = lookupUser(image === undefined ? "/" : this.images.rootfs(image.id), security.runAsUsername);
      if (found === undefined) throw new RuntimeError(Code.INVALID_ARGUMENT, `user ${JSON.stringify(security.runAsUsername)} not found in the image's /etc/passwd`);
      [uid, gid] = [found.uid, gid ?? found.gid];
    }
    if (uid === undefined && ic.User) {
      const [u, g] = ic.User.split(":");
      const found = /^\d+$/.test(u!) ? { uid: Number(u), gid: Number(g ?? 0) } : lookupUser(image === undefined ? "/" : this.images.rootfs(image.id), u!);
      if (found !== undefined) [uid, gid] = [found.uid, gid ?? (g !== undefined && /^\d+$/.test(g) ? Number(g) : found.gid)];
      else notes.push(`image user ${JSON.stringify(ic.User)} not found; running as root`);
    }
    return { argv, env: [...env.values()], cwd, ...(uid !== undefined ? { uid, gid: gid ?? 0 } : {}) };
  }

  /** SIGTERM, then SIGKILL after `timeoutSeconds` (at once for 0); resolves when the container has exited. */
  async #kill(id: string, timeoutSeconds: number): Promise<void> {
    const running = this.#running.get(id);
    const c = this.#containers.get(id);
    if (running === undefined || c === undefined || c.state !== "CONTAINER_RUNNING") return;
    const signal = (sig: NodeJS.Signals): void => {
      try {
        // Namespaced: the PID namespace's init (killing it ends the namespace); otherwise the process group.
        process.kill(this.isolation.namespaces ? c.pid : -c.pid, sig);
      } catch {
        // already gone
      }
    };
    if (timeoutSeconds > 0) {
      signal("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([running.exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutSeconds * 1000)))]);
      clearTimeout(timer);
      if (!timedOut) return;
    }
    signal("SIGKILL");
    // Shims are unref'd children (or not children at all, once re-adopted): hold the process up until the exit is seen.
    const hold = setInterval(() => {}, 60_000);
    await running.exited;
    clearInterval(hold);
  }

  /** Records a container's end: its status as the shim recorded it, or unknown (exit code 255, reason Unknown) when it left none. */
  #exited(id: string, status: { code: number; at: number } | undefined, cgroup: string, running: Pick<Running, "oomBefore">): void {
    this.#running.delete(id);
    const c = this.#containers.get(id);
    // "": a container whose sandbox record is gone has no cgroup path to read.
    const oom = cgroup !== "" && (this.cgroups.usage(cgroup).oomKills ?? 0) > running.oomBefore;
    if (cgroup !== "") this.cgroups.remove(cgroup);
    if (c === undefined) return;
    const exitCode = status?.code ?? 255;
    const reason = status === undefined ? "Unknown" : oom ? "OOMKilled" : exitCode === 0 ? "Completed" : "Error";
    const message = status === undefined ? "the container ended without its shim recording an exit status" : c.message;
    this.#containers.save({ ...c, state: "CONTAINER_EXITED", finishedAt: status?.at ?? now(), exitCode, reason, message, pid: 0, pidStart: "", shimPid: 0, shimStart: "" });
    this.#log(`container ${id} (${c.config.metadata?.name}) exited with ${exitCode} (${reason})`);
  }

  /** Whether the container's shim or its command still runs (the same processes: PID and start time both match). */
  #alive(c: ContainerRecord): boolean {
    return ((c.shimPid ?? 0) > 0 && procStart(c.shimPid!) === c.shimStart) || (c.pid > 0 && procStart(c.pid) === c.pidStart);
  }

  /** Resolves with the container's recorded status once neither its shim nor its command runs (undefined: none recorded). */
  #poll(c: ContainerRecord): Promise<{ code: number; at: number } | undefined> {
    const dir = this.#containerDir(c.id);
    return new Promise((resolve) => {
      this.#polled.set(c.id, () => {
        const recorded = recordedExit(dir);
        if (recorded === undefined && this.#alive(c)) return;
        this.#polled.delete(c.id);
        resolve(recorded);
      });
      this.#pollTimer ??= setInterval(() => {
        for (const check of [...this.#polled.values()]) check();
        if (this.#polled.size === 0) {
          clearInterval(this.#pollTimer);
          this.#pollTimer = undefined;
        }
      }, ADOPTED_POLL_MS).unref();
    });
  }

  #stats(c: ContainerRecord): cri.DeepPartial<cri.ContainerStats> {
    const ts = now();
    const attributes = { id: c.id, metadata: c.config.metadata, labels: c.config.labels, annotations: c.config.annotations };
    if (c.state !== "CONTAINER_RUNNING") return { attributes, cpu: { timestamp: ts }, memory: { timestamp: ts }, writableLayer: null, swap: null };
    let usage = this.cgroups.version !== undefined ? this.cgroups.usage(this.#cgroupPath(this.#sandbox(c.podSandboxId), c)) : {};
    if (usage.cpuNanos === undefined) usage = procUsage(c.pid);
    const u = (v: number | undefined): { value: number } | null => (v === undefined ? null : { value: v });
    let nanoCores: number | undefined;
    const prev = this.#cpuSamples.get(c.id);
    if (usage.cpuNanos !== undefined) {
      if (prev !== undefined && ts > prev.at) nanoCores = Math.max(0, Math.round(((usage.cpuNanos - prev.nanos) / (ts - prev.at)) * 1e9));
      this.#cpuSamples.set(c.id, { at: ts, nanos: usage.cpuNanos });
    }
    const available = usage.memoryLimit !== undefined && usage.workingSet !== undefined && usage.memoryLimit < 2 ** 62 ? Math.max(0, usage.memoryLimit - usage.workingSet) : undefined;
    const upper = join(this.#containerDir(c.id), "upper");
    return {
      attributes,
      cpu: { timestamp: ts, usageCoreNanoSeconds: u(usage.cpuNanos), usageNanoCores: u(nanoCores) },
      memory: { timestamp: ts, workingSetBytes: u(usage.workingSet), availableBytes: u(available), usageBytes: u(usage.memoryUsage), rssBytes: u(usage.rss), pageFaults: u(usage.pageFaults), majorPageFaults: u(usage.majorPageFaults) },
      writableLayer: { timestamp: ts, fsId: { mountpoint: upper }, usedBytes: { value: c.imageId === "" ? 0 : diskUsage(upper) }, inodesUsed: { value: 0 } },
      swap: usage.swapUsage === undefined ? null : { timestamp: ts, swapUsageBytes: u(usage.swapUsage) },
    };
  }

  /** A pod's usage: its running containers' summed, the network of its namespace, its process count. */
  #podStats(s: SandboxRecord): cri.DeepPartial<cri.PodSandboxStats> {
    const ts = now();
    const running = this.#containers.values().filter((c) => c.podSandboxId === s.id && c.state === "CONTAINER_RUNNING");
    const containers = running.map((c) => this.#stats(c));
    const sum = (pick: (c: cri.DeepPartial<cri.ContainerStats>) => number | null | undefined): { value: number } | null => {
      const values = containers.map(pick).filter((v): v is number => typeof v === "number");
      return values.length === 0 ? null : { value: values.reduce((a, b) => a + b, 0) };
    };
    const counters = s.netns !== "" && running[0] !== undefined ? netDev(running[0].pid) : [];
    const iface = (i: (typeof counters)[number]) => ({ name: i.name, rxBytes: { value: i.rxBytes }, rxErrors: { value: i.rxErrors }, txBytes: { value: i.txBytes }, txErrors: { value: i.txErrors } });
    const processes = running.reduce((n, c) => n + (this.cgroups.version !== undefined ? this.cgroups.pids(this.#cgroupPath(s, c)).length : 1), 0);
    return {
      attributes: { id: s.id, metadata: s.config.metadata, labels: s.config.labels, annotations: s.config.annotations },
      linux: {
        cpu: { timestamp: ts, usageCoreNanoSeconds: sum((c) => c.cpu?.usageCoreNanoSeconds?.value), usageNanoCores: sum((c) => c.cpu?.usageNanoCores?.value) },
        memory: {
          timestamp: ts,
          workingSetBytes: sum((c) => c.memory?.workingSetBytes?.value),
          usageBytes: sum((c) => c.memory?.usageBytes?.value),
          rssBytes: sum((c) => c.memory?.rssBytes?.value),
          pageFaults: sum((c) => c.memory?.pageFaults?.value),
          majorPageFaults: sum((c) => c.memory?.majorPageFaults?.value),
        },
        network: counters.length === 0 ? null : { timestamp: ts, defaultInterface: iface(counters.find((i) => i.name === "eth0") ?? counters[0]!), interfaces: counters.filter((i) => i.name !== "eth0").map(iface) },
        process: { timestamp: ts, processCount: { value: processes } },
        containers,
      },
    };
  }

  /**
   * After a restart: containers whose shim or command still runs (PID and
   * start time as recorded, so a recycled PID is never taken for them) are
   * re-adopted, running on with their IDs, logs and cgroups; the others ended
   * while no runtime ran and are recorded exited with the status their shim
   * wrote (or Unknown). Nothing is killed: sandboxes and their networks stay.
   */
  #recover(): void {
    let adopted = 0;
    let ended = 0;
    for (const c of this.#containers.values()) {
      if (c.state !== "CONTAINER_RUNNING") continue;
      const sandbox = this.#sandboxes.get(c.podSandboxId);
      const cgroup = sandbox === undefined ? "" : this.#cgroupPath(sandbox, c);
      // OOM kills counted before now (a child of the container killed while it ran on) are not its end's.
      const running: Running = { exited: Promise.resolve(), oomBefore: cgroup === "" ? 0 : this.cgroups.usage(cgroup).oomKills ?? 0 };
      if (this.#alive(c) && recordedExit(this.#containerDir(c.id)) === undefined) {
        running.exited = this.#poll(c).then((status) => this.#exited(c.id, status, cgroup, running));
        this.#running.set(c.id, running);
        adopted++;
      } else {
        this.#exited(c.id, recordedExit(this.#containerDir(c.id)), cgroup, running);
        ended++;
      }
    }
    if (adopted + ended > 0) this.#log(`embedded runtime: re-adopted ${adopted} running containers; ${ended} ended while no runtime ran`);
  }
}

function toCriImage(i: StoredImage): cri.DeepPartial<cri.Image> {
  const user = i.config.User ?? "";
  const uid = /^\d+/.test(user) ? { value: Number(user.split(":")[0]) } : null;
  return { id: i.id, repoTags: i.repoTags, repoDigests: i.repoDigests, size: i.size, uid, username: uid === null ? user.split(":")[0] : "", spec: { image: i.id }, pinned: false };
}

function matches(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(selector ?? {})) if (labels[k] !== v) return false;
  return true;
}

/**
 * The exec-relevant part of an OCI runtime spec, in the verbose ContainerStatus
 * info where containerd puts its full one: the node agent's exec enters the
 * container at `pid` with this environment, directory and user.
 */
function execSpec(c: ContainerRecord): { process: { env: string[]; cwd: string; user: { uid: number; gid: number } } } {
  return { process: { env: c.process.env, cwd: c.process.cwd, user: { uid: c.process.uid ?? 0, gid: c.process.gid ?? 0 } } };
}
