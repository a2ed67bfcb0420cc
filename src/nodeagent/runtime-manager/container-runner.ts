// One container's CRI calls, as the steps of a pod's plan need them: pull its
// image, build its config, create and start it, run its postStart hook; stop
// it after its preStop hook within the grace period. Why a container could
// not start is kept in the pass's `waiting` map (for the status builder) and
// reported as upstream's events.

import type { Container, Pod } from "../../api/core/types.js";
import { podQOSClass } from "../../api/core/pods.js";
import { parseQuantity } from "../../api/core/quantity.js";
import { isCriError, type CriClient, type PodSandboxConfig, type DeepPartial } from "../cri/index.js";
import { ContainerConfigError, containerEnv, type ObjectSource } from "../env/env.js";
import { containerSeccomp, SeccompError } from "../seccomp/seccomp.js";
import { hookOf, runHook } from "../lifecycle/hooks.js";
import type { PodEvents } from "../events/pod-events.js";
import type { Waiting } from "../status/pod-status.js";
import { containerSwap } from "../swap/swap.js";
import type { SwapBehavior } from "../config/index.js";
import { containerMounts, podDir } from "../volumes/volumes.js";
import { terminationMessageMount } from "../runtime-pod/termination-message.js";
import { hostsFileMount, mountsManagedHosts } from "../runtime-pod/etc-hosts.js";
import type { RuntimeLabels } from "../runtime-pod/labels.js";
import { containerConfig } from "./pod-config.js";
import { ImagePresence } from "./image-presence.js";
import type { DeviceRuntimeConfig } from "../devices/device-manager.js";

export interface ContainerRunnerOptions {
  runtime: CriClient;
  labels: RuntimeLabels;
  rootDir: string;
  /** The cluster's DNS domain: a pod with a subdomain has its FQDN under it in /etc/hosts. */
  clusterDomain: string;
  objects: ObjectSource;
  hostIP: () => string;
  swapBehavior: SwapBehavior | "";
  node: { memoryBytes: number; swapBytes: number; cpu: number; cgroupV2: boolean };
  events: PodEvents;
  /** Device plugins' devices for containers requesting extended resources (devices/device-manager.ts). */
  devices?: { allocate(pod: Pod, container: Container): Promise<DeviceRuntimeConfig | undefined> };
  log?: (line: string) => void;
}

/** Where a container of the pod goes, and where to say why it waits. */
export interface ContainerTarget {
  pod: Pod;
  container: Container;
  podIP: string;
  /** Every IP of the pod (the sandbox's first, then its additional ones; the node's for host-network pods): its /etc/hosts names them. */
  podIPs?: readonly string[];
  waiting: Map<string, Waiting>;
  /** Gets the id of each container created (the pod syncer reads those back by id instead of listing the pod's containers). */
  touched?: Set<string>;
}

export interface CreateOptions {
  sandboxId: string;
  sbConfig: DeepPartial<PodSandboxConfig>;
  attempt: number;
  volumePaths: Map<string, string>;
  /** An ephemeral container's target: the running container whose PID namespace it asks to share. */
  targetId?: string;
}

/** postStart has no deadline upstream; ours only keeps a stuck hook from holding the pod worker forever. */
const POST_START_DEADLINE_S = 3_600;
/** Upstream's minimumGracePeriodInSeconds: what a container still gets after a preStop hook used up the grace period. */
const MIN_GRACE_AFTER_HOOK_S = 2;

export class ContainerRunner {
  readonly #o: ContainerRunnerOptions;
  /** Images the runtime said it has a moment ago: pods started together on one image ask once. */
  readonly #images = new ImagePresence();

  constructor(options: ContainerRunnerOptions) {
    this.#o = options;
  }

  /** Pull if needed, build the config, create and start; records why not in `waiting`. Returns whether to retry soon. */
  async create(t: ContainerTarget, s: CreateOptions): Promise<boolean> {
    const { pod, container: c } = t;
    const { runtime: rt } = this.#o;
    const image = c.image ?? "";
    try {
      const policy = c.imagePullPolicy ?? "IfNotPresent";
      let present = this.#images.known(image);
      if (!present) {
        present = (await rt.imageStatus({ image: { image } })).image !== null;
        if (present) this.#images.confirm(image);
      }
      if (policy === "Never" && !present) {
        this.#failed(t, "ErrImageNeverPull", `Container image "${image}" is not present with pull policy of Never`);
        return true;
      }
      if (!present || policy === "Always") {
        const began = performance.now();
        this.#o.events.record(pod, c.name, "Normal", "Pulling", `Pulling image "${image}"`);
        try {
          await rt.pullImage({ image: { image }, sandboxConfig: s.sbConfig });
          const took = `${((performance.now() - began) / 1000).toFixed(3)}s`;
          // Only the embedded runtime answers a pull without storing the image: it runs the command on the host's root.
          if (!present && (await rt.imageStatus({ image: { image } })).image === null) {
            this.#o.events.record(pod, c.name, "Warning", "ImageNotPresent", `Image "${image}" could not be pulled and is not in the runtime's image store: container ${c.name} runs on the host's root file system`);
          } else this.#o.events.record(pod, c.name, "Normal", "Pulled", `Successfully pulled image "${image}" in ${took} (${took} including waiting)`);
        } catch (err) {
          // With Always, an image already here still runs when no registry answers (nodes without network).
          if (!present) throw Object.assign(err as Error, { pullFailed: true });
        }
      } else {
        this.#o.events.record(pod, c.name, "Normal", "Pulled", `Container image "${image}" already present on machine`);
      }
    } catch (err) {
      const message = isCriError(err) ? err.details : (err as Error).message;
      this.#o.events.record(pod, c.name, "Warning", "Failed", `Failed to pull image "${image}": ${message}`);
      this.#failed(t, "ErrImagePull", message);
      return true;
    }
    let config;
    try {
      config = await this.#config(t, s);
    } catch (err) {
      const reason = err instanceof ContainerConfigError ? err.reason : err instanceof SeccompError ? err.reason : "CreateContainerConfigError";
      this.#failed(t, reason, (err as Error).message);
      return true;
    }
    let containerId: string;
    try {
      ({ containerId } = await rt.createContainer({ podSandboxId: s.sandboxId, config, sandboxConfig: s.sbConfig }));
      t.touched?.add(containerId);
    } catch (err) {
      // The image may be what went missing: the next attempt asks the runtime again.
      this.#images.forget(image);
      this.#failed(t, "CreateContainerError", isCriError(err) ? err.details : (err as Error).message);
      return true;
    }
    this.#o.events.record(pod, c.name, "Normal", "Created", `Created container: ${c.name}`);
    return this.start(containerId, t);
  }

  /**
   * Starts a created container, then runs its postStart hook; a failed hook
   * kills the container (upstream's FailedPostStartHook), which then restarts
   * by the pod's policy with back-off. Returns whether to retry soon.
   */
  async start(containerId: string, t: ContainerTarget): Promise<boolean> {
    const name = t.container.name!;
    try {
      await this.#o.runtime.startContainer({ containerId });
    } catch (err) {
      this.#failed(t, "RunContainerError", isCriError(err) ? err.details : (err as Error).message);
      return true;
    }
    this.#o.events.record(t.pod, name, "Normal", "Started", `Started container ${name}`);
    const hook = hookOf(t.container, "PostStart");
    if (hook === undefined) return false;
    const outcome = await runHook("PostStart", hook, { ...t, runtime: this.#o.runtime, containerId }, POST_START_DEADLINE_S);
    if (outcome.ok) return false;
    this.#o.log?.(`FailedPostStartHook: ${outcome.message}`);
    this.#o.events.record(t.pod, name, "Warning", "FailedPostStartHook", outcome.message);
    await this.#o.runtime.stopContainer({ containerId, timeout: 0 }).catch(ignoreNotFound);
    t.waiting.set(name, { reason: "PostStartHookError", message: outcome.message });
    return false;
  }

  /**
   * Stops one container: its preStop hook first (bounded by the grace
   * period; a failure is logged and the stop goes on, as upstream), then
   * StopContainer with the time left.
   */
  async kill(pod: Pod, spec: Container | undefined, containerId: string, podIP: string, graceSeconds: number, why?: string): Promise<void> {
    if (spec?.name) this.#o.events.record(pod, spec.name, "Normal", "Killing", why ?? `Stopping container ${spec.name}`);
    const hook = spec && hookOf(spec, "PreStop");
    let timeout = graceSeconds;
    if (hook !== undefined && graceSeconds > 0) {
      const began = Date.now();
      const outcome = await runHook("PreStop", hook, { pod, container: spec!, containerId, podIP, runtime: this.#o.runtime }, graceSeconds);
      if (!outcome.ok) {
        this.#o.log?.(`FailedPreStopHook: ${outcome.message}`);
        this.#o.events.record(pod, spec!.name, "Warning", "FailedPreStopHook", outcome.message);
      }
      timeout = Math.max(MIN_GRACE_AFTER_HOOK_S, graceSeconds - Math.floor((Date.now() - began) / 1000));
    }
    await this.#o.runtime.stopContainer({ containerId, timeout }).catch(ignoreNotFound);
  }

  /** The CRI container config: environment, mounts, seccomp and swap as the pod and node say. */
  async #config(t: ContainerTarget, s: CreateOptions) {
    const { pod, container: c } = t;
    const node = this.#o.node;
    const envs = await containerEnv(pod, c, { objects: this.#o.objects, hostIP: this.#o.hostIP(), podIP: t.podIP, nodeAllocatable: { cpu: node.cpu, memory: node.memoryBytes } });
    const seccomp = containerSeccomp(pod, c, { profileRoot: `${this.#o.rootDir}/seccomp` });
    const swap = containerSwap({
      behavior: this.#o.swapBehavior,
      qosClass: pod.status?.qosClass ?? podQOSClass(pod.spec),
      memoryRequestBytes: parseQuantity(c.resources?.requests?.["memory"] ?? undefined) ?? 0,
      memoryLimitBytes: parseQuantity(c.resources?.limits?.["memory"] ?? undefined) ?? 0,
      nodeMemoryBytes: node.memoryBytes,
      nodeSwapBytes: node.swapBytes,
      critical: (pod.spec?.priority ?? 0) >= 2_000_000_000,
      cgroupV2: node.cgroupV2,
    });
    // Devices first: their variables are overridden by the container's own, as upstream.
    const devices = await this.#o.devices?.allocate(pod, c);
    const dir = podDir(this.#o.rootDir, pod.metadata.uid!);
    const podIPs = t.podIPs ?? (t.podIP !== "" ? [t.podIP] : []);
    const config = containerConfig({
      pod,
      container: c,
      attempt: s.attempt,
      labels: this.#o.labels,
      envs: devices ? [...devices.envs.filter((d) => !envs.some((e) => e.key === d.key)), ...envs] : envs,
      mounts: [
        ...containerMounts(pod, c, s.volumePaths, new Map(envs.map((kv) => [kv.key, kv.value]))),
        ...(c.terminationMessagePath ? [terminationMessageMount(dir, c.name!, c.terminationMessagePath)] : []),
        ...(devices?.mounts ?? []),
        ...(mountsManagedHosts(c, podIPs) ? [hostsFileMount({ pod, podDir: dir, podIPs, clusterDomain: this.#o.clusterDomain })] : []),
      ],
      seccomp,
      swap,
      ...(s.targetId !== undefined ? { targetId: s.targetId } : {}),
    });
    if (devices) {
      config.devices = [...(config.devices ?? []), ...devices.devices];
      config.annotations = { ...devices.annotations, ...config.annotations };
    }
    return config;
  }

  /** A container that could not be created or started: why it waits, and upstream's Warning Failed "Error: REASON". */
  #failed(t: ContainerTarget, reason: string, message: string): void {
    const name = t.container.name!;
    t.waiting.set(name, { reason, message });
    this.#o.events.record(t.pod, name, "Warning", "Failed", `Error: ${reason.startsWith("ErrImage") ? reason : message}`);
  }
}

export function ignoreNotFound(err: unknown): void {
  if (!isCriError(err) || err.codeName !== "NOT_FOUND") throw err;
}
