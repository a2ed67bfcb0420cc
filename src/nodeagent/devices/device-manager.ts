// The device manager (seed 001, "Local files" and "Versioning" 1): device
// plugins speaking v1beta1 register on the agent's UNIX socket
// `<root-dir>/device-plugins/<agent name>.sock` (upstream's kubelet.sock
// through the naming table); the agent dials each plugin's socket (a file in
// that directory), follows its ListAndWatch stream and reports the resource as
// an extended resource of the node (capacity: every device, allocatable: the
// healthy ones). When a container requesting the resource is created, free
// healthy devices are chosen (the plugin's GetPreferredAllocation when it
// offers one), the plugin's Allocate answers what the container gets (env,
// mounts, device nodes, annotations) and PreStartContainer runs when the
// plugin asked for it. Allocations are kept in the checkpoint file
// `<agent name>_internal_checkpoint` beside the socket, so a restarted agent
// keeps them; allocations of pods no longer active are released.

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Container, Pod } from "../../api/core/types.js";
import { packageRoot } from "../../component/index.js";
import { parseQuantity } from "../../api/core/quantity.js";
import type { Device as CriDevice, KeyValue, Mount as CriMount } from "../cri/types.js";

export const DEVICE_PLUGIN_VERSION = "v1beta1";

/** Init containers first, then the others: the order devices are allocated at admission. */
const podContainers = (pod: Pod): Container[] => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
const HEALTHY = "Healthy";

// ---- the wire messages (proto-loader, keepCase false) ----

export interface PluginOptions { preStartRequired: boolean; getPreferredAllocationAvailable: boolean }
export interface RegisterRequest { version: string; endpoint: string; resourceName: string; options: PluginOptions | null }
export interface PluginDevice { ID: string; health: string }
export interface ContainerAllocateResponse {
  envs: Record<string, string>;
  mounts: { containerPath: string; hostPath: string; readOnly: boolean }[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  annotations: Record<string, string>;
}

const LOADER: protoLoader.Options = { keepCase: false, longs: Number, enums: String, defaults: true, arrays: true, objects: true, oneofs: true };

interface Services {
  Registration: grpc.ServiceClientConstructor;
  DevicePlugin: grpc.ServiceClientConstructor;
}
let services: Services | undefined;

/** The v1beta1 Registration and DevicePlugin services (for the agent, and for plugins written in tests). */
export function devicePluginServices(): Services {
  if (services) return services;
  const def = protoLoader.loadSync(join(packageRoot(), "src", "nodeagent", "devices", "deviceplugin-v1beta1.proto"), LOADER);
  const pkg = (grpc.loadPackageDefinition(def) as unknown as { v1beta1: Services }).v1beta1;
  services = { Registration: pkg.Registration, DevicePlugin: pkg.DevicePlugin };
  return services;
}

/** What a container gets from its devices, in CRI terms. */
export interface DeviceRuntimeConfig {
  envs: KeyValue[];
  mounts: CriMount[];
  devices: CriDevice[];
  annotations: Record<string, string>;
}

/** The device manager's checkpoint, in the shape of upstream's kubelet_internal_checkpoint. */
interface CheckpointData {
  PodDeviceEntries: { PodUID: string; ContainerName: string; ResourceName: string; DeviceIDs: Record<string, string[]>; AllocResp: string }[];
  RegisteredDevices: Record<string, string[]>;
}

/** Upstream's IsExtendedResourceName, the part a device plugin's resource must pass: a qualified name with a domain outside the native one. */
export function resourceNameError(name: string, nativeDomain: string): string | undefined {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)\/([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/.exec(name);
  if (m === null || m[1]!.length > 253 || m[5]!.length > 63) return `invalid name of device plugin socket: ${name}`;
  if (m[1] === nativeDomain || m[1]!.endsWith(`.${nativeDomain}`)) return `invalid name of device plugin socket: ${name}`;
  return undefined;
}

interface Endpoint {
  client: grpc.Client;
  options: PluginOptions;
  stream: grpc.ClientReadableStream<{ devices: PluginDevice[] }>;
}

export interface DeviceManagerOptions {
  /** <root-dir>/device-plugins. */
  dir: string;
  /** The naming table's agent name: the socket is `<name>.sock`, the checkpoint `<name>_internal_checkpoint`. */
  agentName: string;
  /** The native resource domain (`orch.io`, or `kubernetes.io` on upstream's names): not an extended resource. */
  nativeDomain: string;
  /** The pods whose allocations are kept (the others' are released). */
  activePods: () => readonly Pod[];
  /** Capacity or health changed: the node status should be written. */
  onChange?: () => void;
  log?: (line: string) => void;
}

export class DeviceManager {
  readonly #o: DeviceManagerOptions;
  readonly socket: string;
  readonly checkpointPath: string;
  /** resource → device ID → health. */
  readonly #devices = new Map<string, Map<string, string>>();
  readonly #endpoints = new Map<string, Endpoint>();
  /** pod UID → container → resource → { device IDs, the plugin's answer (protobuf, base64) }. */
  #allocations = new Map<string, Map<string, Map<string, { ids: string[]; resp: string }>>>();
  #server: grpc.Server | undefined;
  /** Allocations in progress, one at a time (two containers must not get the same device). */
  #queue: Promise<unknown> = Promise.resolve();
  /** Pods admitted whose worker may not be active yet (upstream's pending admission pod). */
  readonly #admitting = new Set<string>();

  constructor(options: DeviceManagerOptions) {
    this.#o = options;
    this.socket = join(options.dir, `${options.agentName}.sock`);
    this.checkpointPath = join(options.dir, `${options.agentName}_internal_checkpoint`);
  }

  /** Reads the checkpoint and serves the Registration service. */
  async start(): Promise<void> {
    mkdirSync(this.#o.dir, { recursive: true, mode: 0o750 });
    this.#readCheckpoint();
    rmSync(this.socket, { force: true });
    const server = new grpc.Server();
    server.addService(devicePluginServices().Registration.service, {
      Register: (call: grpc.ServerUnaryCall<RegisterRequest, object>, done: grpc.sendUnaryData<object>) => {
        const why = this.#register(call.request);
        if (why === undefined) done(null, {});
        else done({ code: grpc.status.UNKNOWN, details: why });
      },
    });
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${this.socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    this.#server = server;
  }

  async stop(): Promise<void> {
    for (const e of this.#endpoints.values()) {
      e.stream.cancel();
      e.client.close();
    }
    this.#endpoints.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((r) => server.tryShutdown(() => r()));
    rmSync(this.socket, { force: true });
  }

  /** Extended resources for the node status: capacity counts every device, allocatable the healthy ones. */
  resources(): { capacity: Record<string, number>; allocatable: Record<string, number> } {
    const capacity: Record<string, number> = {};
    const allocatable: Record<string, number> = {};
    for (const [name, devices] of this.#devices) {
      capacity[name] = devices.size;
      allocatable[name] = [...devices.values()].filter((h) => h === HEALTHY).length;
    }
    return { capacity, allocatable };
  }

  /** The device IDs a container holds, per resource (for tests and the pod resources view). */
  allocated(podUid: string, container: string): Record<string, string[]> {
    return Object.fromEntries([...(this.#allocations.get(podUid)?.get(container) ?? new Map<string, { ids: string[] }>())].map(([r, a]) => [r, a.ids]));
  }

  /** Whether a container of the pod asks for a resource a device plugin serves (or served before a restart). */
  needsDevices(pod: Pod): boolean {
    return podContainers(pod).some((c) => this.#wanted(c).size > 0);
  }

  /**
   * Admission (upstream allocates here, not at creation): the devices of
   * every container, init containers first, are allocated now; the error's
   * text when they cannot be (then nothing stays allocated to the pod).
   * Until the pod is settled (its worker runs), its allocations count as in use.
   */
  async admit(pod: Pod): Promise<string | undefined> {
    const uid = pod.metadata.uid ?? "";
    this.#admitting.add(uid);
    try {
      for (const c of podContainers(pod)) await this.#queued(() => this.#allocate(pod, c, false));
      return undefined;
    } catch (err) {
      this.#admitting.delete(uid);
      if (this.#allocations.delete(uid)) this.#writeCheckpoint();
      return (err as Error).message;
    }
  }

  settled(uid: string): void {
    this.#admitting.delete(uid);
  }

  /** Upstream's "requested number of devices unavailable" and plugin errors are thrown as DeviceError. */
  allocate(pod: Pod, container: Container): Promise<DeviceRuntimeConfig | undefined> {
    return this.#queued(() => this.#allocate(pod, container, true));
  }

  /** One allocation at a time. */
  #queued<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** The device plugin resources a container asks for, and how many of each. */
  #wanted(container: Container): Map<string, number> {
    const wanted = new Map<string, number>();
    for (const [name, q] of Object.entries({ ...(container.resources?.requests ?? {}), ...(container.resources?.limits ?? {}) })) {
      if (!this.#devices.has(name) && !this.#endpoints.has(name)) continue;
      const n = parseQuantity(q ?? undefined) ?? 0;
      if (n > 0) wanted.set(name, n);
    }
    return wanted;
  }

  /** Allocates (or finds) the container's devices; PreStartContainer only as the container is created (`starting`), as upstream. */
  async #allocate(pod: Pod, container: Container, starting: boolean): Promise<DeviceRuntimeConfig | undefined> {
    const uid = pod.metadata.uid ?? "";
    const wanted = this.#wanted(container);
    if (wanted.size === 0) return undefined;
    this.#release();
    const out: DeviceRuntimeConfig = { envs: [], mounts: [], devices: [], annotations: {} };
    const name = container.name ?? "";
    for (const [resource, n] of wanted) {
      let entry = this.#allocations.get(uid)?.get(name)?.get(resource);
      if (entry === undefined || entry.ids.length !== n) {
        const endpoint = this.#endpoints.get(resource);
        if (endpoint === undefined) throw new DeviceError(`device plugin for resource ${resource} is not registered`);
        const free = this.#free(resource);
        if (free.length < n) throw new DeviceError(`requested number of devices unavailable for ${resource}. Requested: ${n}, Available: ${free.length}`);
        const ids = endpoint.options.getPreferredAllocationAvailable ? await this.#preferred(endpoint, free, n) : free.slice(0, n);
        const response = await unary<{ containerResponses: ContainerAllocateResponse[] }>(endpoint.client, "Allocate", { containerRequests: [{ devicesIds: ids }] });
        const resp = response.containerResponses[0];
        if (resp === undefined) throw new DeviceError(`failed to allocate devices of ${resource}: the plugin answered no container response`);
        entry = { ids, resp: Buffer.from(JSON.stringify(resp)).toString("base64") };
        let byContainer = this.#allocations.get(uid);
        if (byContainer === undefined) this.#allocations.set(uid, (byContainer = new Map()));
        let byResource = byContainer.get(name);
        if (byResource === undefined) byContainer.set(name, (byResource = new Map()));
        byResource.set(resource, entry);
        this.#writeCheckpoint();
        this.#o.log?.(`devices: ${resource} ${ids.join(",")} allocated to ${pod.metadata.namespace}/${pod.metadata.name} container ${name}`);
      }
      const endpoint = this.#endpoints.get(resource);
      if (starting && endpoint?.options.preStartRequired) await unary(endpoint.client, "PreStartContainer", { devicesIds: entry.ids });
      const resp = JSON.parse(Buffer.from(entry.resp, "base64").toString("utf8")) as ContainerAllocateResponse;
      for (const [key, value] of Object.entries(resp.envs ?? {})) out.envs.push({ key, value });
      for (const m of resp.mounts ?? []) out.mounts.push({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readOnly, selinuxRelabel: false, propagation: "PROPAGATION_PRIVATE", uidMappings: [], gidMappings: [], recursiveReadOnly: false, image: null });
      for (const d of resp.devices ?? []) out.devices.push({ containerPath: d.containerPath, hostPath: d.hostPath, permissions: d.permissions || "rwm" });
      Object.assign(out.annotations, resp.annotations ?? {});
    }
    return out;
  }

  async #preferred(endpoint: Endpoint, free: string[], n: number): Promise<string[]> {
    const r = await unary<{ containerResponses: { deviceIDs: string[] }[] }>(endpoint.client, "GetPreferredAllocation", { containerRequests: [{ availableDeviceIDs: free, mustIncludeDeviceIDs: [], allocationSize: n }] });
    const ids = r.containerResponses[0]?.deviceIDs ?? [];
    return ids.length === n && ids.every((id) => free.includes(id)) ? ids : free.slice(0, n);
  }

  /** Healthy devices of the resource no active pod holds. */
  #free(resource: string): string[] {
    const used = new Set<string>();
    for (const byContainer of this.#allocations.values()) for (const byResource of byContainer.values()) for (const id of byResource.get(resource)?.ids ?? []) used.add(id);
    return [...(this.#devices.get(resource) ?? new Map<string, string>())].filter(([id, h]) => h === HEALTHY && !used.has(id)).map(([id]) => id).sort();
  }

  /** Forgets the allocations of pods no longer active. */
  #release(): void {
    const active = new Set(this.#o.activePods().map((p) => p.metadata.uid ?? ""));
    // Pods admitted count until their worker runs (settled); then the active list holds them.
    for (const uid of this.#admitting) active.add(uid);
    let changed = false;
    for (const uid of [...this.#allocations.keys()]) {
      if (active.has(uid)) continue;
      this.#allocations.delete(uid);
      changed = true;
    }
    if (changed) this.#writeCheckpoint();
  }

  /** Validates a registration and starts following the plugin; a message when refused. */
  #register(r: RegisterRequest): string | undefined {
    if (r.version !== DEVICE_PLUGIN_VERSION) return `requested device plugin version ${JSON.stringify(r.version)} is not supported (supported versions: [${DEVICE_PLUGIN_VERSION}])`;
    const nameErr = resourceNameError(r.resourceName, this.#o.nativeDomain);
    if (nameErr !== undefined) return nameErr;
    if (r.endpoint === "" || basename(r.endpoint) !== r.endpoint) return `invalid endpoint ${JSON.stringify(r.endpoint)}: it must be a socket file name in ${this.#o.dir}`;
    const path = join(this.#o.dir, r.endpoint);
    try {
      if (!statSync(path).isSocket()) return `endpoint ${path} is not a socket`;
    } catch {
      return `endpoint ${path} does not exist`;
    }
    const old = this.#endpoints.get(r.resourceName);
    if (old) {
      old.stream.cancel();
      old.client.close();
    }
    const { DevicePlugin } = devicePluginServices();
    const client = new DevicePlugin(`unix://${path}`, grpc.credentials.createInsecure());
    const options = r.options ?? { preStartRequired: false, getPreferredAllocationAvailable: false };
    const stream = (client as unknown as { ListAndWatch(req: object): grpc.ClientReadableStream<{ devices: PluginDevice[] }> }).ListAndWatch({});
    const endpoint: Endpoint = { client, options, stream };
    this.#endpoints.set(r.resourceName, endpoint);
    this.#o.log?.(`devices: plugin for ${r.resourceName} registered at ${path}`);
    stream.on("data", (msg: { devices: PluginDevice[] }) => {
      if (this.#endpoints.get(r.resourceName) !== endpoint) return;
      this.#devices.set(r.resourceName, new Map(msg.devices.map((d) => [d.ID, d.health])));
      this.#writeCheckpoint();
      this.#o.onChange?.();
    });
    const gone = () => {
      if (this.#endpoints.get(r.resourceName) !== endpoint) return;
      this.#endpoints.delete(r.resourceName);
      client.close();
      // As upstream, the devices stay in capacity but none is allocatable until the plugin is back.
      const devices = this.#devices.get(r.resourceName);
      if (devices) for (const id of devices.keys()) devices.set(id, "Unhealthy");
      this.#o.log?.(`devices: plugin for ${r.resourceName} went away: its devices are unhealthy`);
      this.#o.onChange?.();
    };
    stream.on("error", gone);
    stream.on("end", gone);
    return undefined;
  }

  #readCheckpoint(): void {
    if (!existsSync(this.checkpointPath)) return;
    try {
      const doc = JSON.parse(readFileSync(this.checkpointPath, "utf8")) as { Data: CheckpointData; Checksum: number };
      if (doc.Checksum !== checksum(doc.Data)) throw new Error("checksum mismatch");
      for (const e of doc.Data.PodDeviceEntries) {
        let byContainer = this.#allocations.get(e.PodUID);
        if (byContainer === undefined) this.#allocations.set(e.PodUID, (byContainer = new Map()));
        let byResource = byContainer.get(e.ContainerName);
        if (byResource === undefined) byContainer.set(e.ContainerName, (byResource = new Map()));
        byResource.set(e.ResourceName, { ids: Object.values(e.DeviceIDs).flat(), resp: e.AllocResp });
      }
      // Devices known before the restart: counted, none allocatable until their plugin registers again.
      for (const [resource, ids] of Object.entries(doc.Data.RegisteredDevices)) this.#devices.set(resource, new Map(ids.map((id) => [id, "Unhealthy"])));
    } catch (err) {
      this.#o.log?.(`devices: checkpoint ${this.checkpointPath} is unreadable (${(err as Error).message}): starting without it`);
    }
  }

  #writeCheckpoint(): void {
    const data: CheckpointData = { PodDeviceEntries: [], RegisteredDevices: {} };
    for (const [uid, byContainer] of this.#allocations) {
      for (const [container, byResource] of byContainer) {
        for (const [resource, a] of byResource) data.PodDeviceEntries.push({ PodUID: uid, ContainerName: container, ResourceName: resource, DeviceIDs: { "-1": a.ids }, AllocResp: a.resp });
      }
    }
    for (const [resource, devices] of this.#devices) data.RegisteredDevices[resource] = [...devices.keys()].sort();
    const tmp = `${this.checkpointPath}.tmp`;
    writeFileSync(tmp, JSON.stringify({ Data: data, Checksum: checksum(data) }), { mode: 0o600 });
    renameSync(tmp, this.checkpointPath);
  }
}

export class DeviceError extends Error {
  override name = "DeviceError";
}

/** FNV-1a (32 bits) of the data's JSON: the checkpoint's integrity check. */
function checksum(data: CheckpointData): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(JSON.stringify(data))) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

function unary<T>(client: grpc.Client, method: string, request: object): Promise<T> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: object, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: T) => void) => void>)[method]!(request, { deadline: Date.now() + 30_000 }, (err, value) => {
      if (err) reject(new DeviceError(`${method} of the device plugin failed: ${err.details || err.message}`));
      else resolve(value);
    });
  });
}
