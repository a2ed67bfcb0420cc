// TypeScript shapes of the runtime.v1 messages in runtime-v1.proto, as
// @grpc/proto-loader decodes them here: lowerCamelCase fields, 64-bit integers
// as number, enums as their names, every scalar present (defaults), unset
// sub-messages null. Requests are DeepPartial: unset fields take defaults.

/** A request: any field may be left out and is sent as its default. */
export type DeepPartial<T> = T extends Buffer ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | null } : T;

export type Labels = Record<string, string>;

// ---- enums (names as on the wire) ----
export type ContainerState = "CONTAINER_CREATED" | "CONTAINER_RUNNING" | "CONTAINER_EXITED" | "CONTAINER_UNKNOWN";
export type PodSandboxState = "SANDBOX_READY" | "SANDBOX_NOTREADY";
export type NamespaceMode = "POD" | "CONTAINER" | "NODE" | "TARGET";
export type Protocol = "TCP" | "UDP" | "SCTP";
export type MountPropagation = "PROPAGATION_PRIVATE" | "PROPAGATION_HOST_TO_CONTAINER" | "PROPAGATION_BIDIRECTIONAL";
export type ProfileType = "RuntimeDefault" | "Unconfined" | "Localhost";
export type SupplementalGroupsPolicy = "Merge" | "Strict";

// ---- version and status ----
export interface VersionRequest { version: string }
export interface VersionResponse { version: string; runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }
export interface StatusRequest { verbose: boolean }
export interface RuntimeCondition { type: string; status: boolean; reason: string; message: string }
export interface RuntimeHandler { name: string; features: { recursiveReadOnlyMounts: boolean; userNamespaces: boolean } | null }
export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
  info: Labels;
  runtimeHandlers: RuntimeHandler[];
  features: { supplementalGroupsPolicy: boolean } | null;
}

export interface UpdateRuntimeConfigRequest { runtimeConfig: { networkConfig: { podCidr: string } | null } | null }
export type CgroupDriver = "SYSTEMD" | "CGROUPFS";
export interface RuntimeConfigResponse { linux: { cgroupDriver: CgroupDriver } | null }

// ---- shared pieces ----
export interface Int64Value { value: number }
export interface UInt64Value { value: number }
export interface KeyValue { key: string; value: string }
export interface DNSConfig { servers: string[]; searches: string[]; options: string[] }
export interface PortMapping { protocol: Protocol; containerPort: number; hostPort: number; hostIp: string }
export interface IDMapping { hostId: number; containerId: number; length: number }
export interface ImageSpec { image: string; annotations: Labels; userSpecifiedImage: string; runtimeHandler: string }
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel: boolean;
  propagation: MountPropagation;
  uidMappings: IDMapping[];
  gidMappings: IDMapping[];
  recursiveReadOnly: boolean;
  image: ImageSpec | null;
}
export interface NamespaceOption {
  network: NamespaceMode;
  pid: NamespaceMode;
  ipc: NamespaceMode;
  targetId: string;
  usernsOptions: { mode: NamespaceMode; uids: IDMapping[]; gids: IDMapping[] } | null;
}
export interface SELinuxOption { user: string; role: string; type: string; level: string }
/** Seccomp or AppArmor profile; for seccomp Localhost, localhostRef is the profile file's absolute path. */
export interface SecurityProfile { profileType: ProfileType; localhostRef: string }
export interface Capability { addCapabilities: string[]; dropCapabilities: string[]; addAmbientCapabilities: string[] }
export interface LinuxContainerResources {
  cpuPeriod: number;
  cpuQuota: number;
  cpuShares: number;
  memoryLimitInBytes: number;
  oomScoreAdj: number;
  cpusetCpus: string;
  cpusetMems: string;
  hugepageLimits: { pageSize: string; limit: number }[];
  unified: Labels;
  /** The agent's swap decision (seed 001, "Swap behavior setting"); 0 = not specified. */
  memorySwapLimitInBytes: number;
}

// ---- sandboxes ----
export interface PodSandboxMetadata { name: string; uid: string; namespace: string; attempt: number }
export interface LinuxSandboxSecurityContext {
  namespaceOptions: NamespaceOption | null;
  selinuxOptions: SELinuxOption | null;
  runAsUser: Int64Value | null;
  readonlyRootfs: boolean;
  supplementalGroups: number[];
  privileged: boolean;
  runAsGroup: Int64Value | null;
  seccomp: SecurityProfile | null;
  apparmor: SecurityProfile | null;
  supplementalGroupsPolicy: SupplementalGroupsPolicy;
}
export interface LinuxPodSandboxConfig {
  cgroupParent: string;
  securityContext: LinuxSandboxSecurityContext | null;
  sysctls: Labels;
  overhead: LinuxContainerResources | null;
  resources: LinuxContainerResources | null;
}
export interface PodSandboxConfig {
  metadata: PodSandboxMetadata | null;
  /** Empty for host-network sandboxes (containerd insists). */
  hostname: string;
  logDirectory: string;
  dnsConfig: DNSConfig | null;
  portMappings: PortMapping[];
  labels: Labels;
  annotations: Labels;
  linux: LinuxPodSandboxConfig | null;
}
export interface RunPodSandboxRequest { config: PodSandboxConfig | null; runtimeHandler: string }
export interface RunPodSandboxResponse { podSandboxId: string }
export interface PodSandboxIdRequest { podSandboxId: string }
export type StopPodSandboxRequest = PodSandboxIdRequest;
export type RemovePodSandboxRequest = PodSandboxIdRequest;
export type Empty = Record<string, never>;
export interface PodSandboxStatusRequest { podSandboxId: string; verbose: boolean }
export interface PodSandboxNetworkStatus { ip: string; additionalIps: { ip: string }[] }
export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  /** Nanoseconds since the epoch. */
  createdAt: number;
  network: PodSandboxNetworkStatus | null;
  linux: { namespaces: { options: NamespaceOption | null } | null } | null;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}
export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null;
  info: Labels;
  containersStatuses: ContainerStatus[];
  timestamp: number;
}
export interface PodSandboxFilter { id: string; state: { state: PodSandboxState } | null; labelSelector: Labels }
export interface ListPodSandboxRequest { filter: PodSandboxFilter | null }
export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}
export interface ListPodSandboxResponse { items: PodSandbox[] }

// ---- containers ----
export interface LinuxContainerSecurityContext {
  capabilities: Capability | null;
  privileged: boolean;
  namespaceOptions: NamespaceOption | null;
  selinuxOptions: SELinuxOption | null;
  runAsUser: Int64Value | null;
  runAsUsername: string;
  readonlyRootfs: boolean;
  supplementalGroups: number[];
  noNewPrivs: boolean;
  runAsGroup: Int64Value | null;
  maskedPaths: string[];
  readonlyPaths: string[];
  seccomp: SecurityProfile | null;
  apparmor: SecurityProfile | null;
  supplementalGroupsPolicy: SupplementalGroupsPolicy;
}
export interface ContainerMetadata { name: string; attempt: number }
export interface Device { containerPath: string; hostPath: string; permissions: string }
export interface ContainerConfig {
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  command: string[];
  args: string[];
  workingDir: string;
  envs: KeyValue[];
  mounts: Mount[];
  devices: Device[];
  labels: Labels;
  annotations: Labels;
  /** Relative to the sandbox's logDirectory. */
  logPath: string;
  stdin: boolean;
  stdinOnce: boolean;
  tty: boolean;
  linux: { resources: LinuxContainerResources | null; securityContext: LinuxContainerSecurityContext | null } | null;
  CDIDevices: { name: string }[];
}
export interface CreateContainerRequest { podSandboxId: string; config: ContainerConfig | null; sandboxConfig: PodSandboxConfig | null }
export interface CreateContainerResponse { containerId: string }
export interface ContainerIdRequest { containerId: string }
export type StartContainerRequest = ContainerIdRequest;
export type RemoveContainerRequest = ContainerIdRequest;
export type ReopenContainerLogRequest = ContainerIdRequest;
export type ContainerStatsRequest = ContainerIdRequest;
export interface StopContainerRequest { containerId: string; /** Seconds of grace before SIGKILL. */ timeout: number }
export interface ContainerFilter { id: string; state: { state: ContainerState } | null; podSandboxId: string; labelSelector: Labels }
export interface ListContainersRequest { filter: ContainerFilter | null }
export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  imageId: string;
}
export interface ListContainersResponse { containers: Container[] }
export interface ContainerStatusRequest { containerId: string; verbose: boolean }
export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata | null;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: ImageSpec | null;
  imageRef: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  mounts: Mount[];
  logPath: string;
  resources: { linux: LinuxContainerResources | null } | null;
  imageId: string;
  user: { linux: { uid: number; gid: number; supplementalGroups: number[] } | null } | null;
  imageSource: string;
}
export interface ContainerStatusResponse { status: ContainerStatus | null; info: Labels }
export interface UpdateContainerResourcesRequest { containerId: string; linux: LinuxContainerResources | null; annotations: Labels }
export interface ExecSyncRequest { containerId: string; cmd: string[]; /** Seconds; 0 = no limit. */ timeout: number }
export interface ExecSyncResponse { stdout: Buffer; stderr: Buffer; exitCode: number }
export interface AttachRequest { containerId: string; stdin: boolean; tty: boolean; stdout: boolean; stderr: boolean }
export interface AttachResponse { url: string }
export interface CheckpointContainerRequest { containerId: string; location: string; timeout: number }

// ---- stats ----
export interface FilesystemUsage { timestamp: number; fsId: { mountpoint: string } | null; usedBytes: UInt64Value | null; inodesUsed: UInt64Value | null }
export interface CpuUsage { timestamp: number; usageCoreNanoSeconds: UInt64Value | null; usageNanoCores: UInt64Value | null }
export interface MemoryUsage {
  timestamp: number;
  workingSetBytes: UInt64Value | null;
  availableBytes: UInt64Value | null;
  usageBytes: UInt64Value | null;
  rssBytes: UInt64Value | null;
  pageFaults: UInt64Value | null;
  majorPageFaults: UInt64Value | null;
}
export interface SwapUsage { timestamp: number; swapAvailableBytes: UInt64Value | null; swapUsageBytes: UInt64Value | null }
export interface ContainerAttributes { id: string; metadata: ContainerMetadata | null; labels: Labels; annotations: Labels }
export interface ContainerStats {
  attributes: ContainerAttributes | null;
  cpu: CpuUsage | null;
  memory: MemoryUsage | null;
  writableLayer: FilesystemUsage | null;
  swap: SwapUsage | null;
}
export interface ContainerStatsResponse { stats: ContainerStats | null }
export interface ListContainerStatsRequest { filter: { id: string; podSandboxId: string; labelSelector: Labels } | null }
export interface ListContainerStatsResponse { stats: ContainerStats[] }

export interface NetworkInterfaceUsage { name: string; rxBytes: UInt64Value | null; rxErrors: UInt64Value | null; txBytes: UInt64Value | null; txErrors: UInt64Value | null }
export interface PodSandboxStats {
  attributes: { id: string; metadata: PodSandboxMetadata | null; labels: Labels; annotations: Labels } | null;
  linux: {
    cpu: CpuUsage | null;
    memory: MemoryUsage | null;
    network: { timestamp: number; defaultInterface: NetworkInterfaceUsage | null; interfaces: NetworkInterfaceUsage[] } | null;
    process: { timestamp: number; processCount: UInt64Value | null } | null;
    containers: ContainerStats[];
  } | null;
}
export interface PodSandboxStatsRequest { podSandboxId: string }
export interface PodSandboxStatsResponse { stats: PodSandboxStats | null }
export interface ListPodSandboxStatsRequest { filter: { id: string; labelSelector: Labels } | null }
export interface ListPodSandboxStatsResponse { stats: PodSandboxStats[] }

// ---- images ----
export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  uid: Int64Value | null;
  username: string;
  spec: ImageSpec | null;
  pinned: boolean;
  imageSource: string;
}
export interface ListImagesRequest { filter: { image: ImageSpec | null } | null }
export interface ListImagesResponse { images: Image[] }
export interface ImageStatusRequest { image: ImageSpec | null; verbose: boolean }
/** image is null when the image is not present (that is not an error). */
export interface ImageStatusResponse { image: Image | null; info: Labels }
export interface AuthConfig { username: string; password: string; auth: string; serverAddress: string; identityToken: string; registryToken: string }
export interface PullImageRequest { image: ImageSpec | null; auth: AuthConfig | null; sandboxConfig: PodSandboxConfig | null }
export interface PullImageResponse { imageRef: string }
export interface RemoveImageRequest { image: ImageSpec | null }
export interface ImageFsInfoResponse { imageFilesystems: FilesystemUsage[]; containerFilesystems: FilesystemUsage[] }

/**
 * The RPCs of both services: name → [request, response]. The client's and the
 * embedded server's method tables are typed from this one list.
 */
export interface RuntimeRpcs {
  version: [VersionRequest, VersionResponse];
  status: [StatusRequest, StatusResponse];
  runPodSandbox: [RunPodSandboxRequest, RunPodSandboxResponse];
  stopPodSandbox: [StopPodSandboxRequest, Empty];
  removePodSandbox: [RemovePodSandboxRequest, Empty];
  podSandboxStatus: [PodSandboxStatusRequest, PodSandboxStatusResponse];
  listPodSandbox: [ListPodSandboxRequest, ListPodSandboxResponse];
  createContainer: [CreateContainerRequest, CreateContainerResponse];
  startContainer: [StartContainerRequest, Empty];
  stopContainer: [StopContainerRequest, Empty];
  removeContainer: [RemoveContainerRequest, Empty];
  listContainers: [ListContainersRequest, ListContainersResponse];
  containerStatus: [ContainerStatusRequest, ContainerStatusResponse];
  updateContainerResources: [UpdateContainerResourcesRequest, Empty];
  reopenContainerLog: [ReopenContainerLogRequest, Empty];
  execSync: [ExecSyncRequest, ExecSyncResponse];
  attach: [AttachRequest, AttachResponse];
  containerStats: [ContainerStatsRequest, ContainerStatsResponse];
  listContainerStats: [ListContainerStatsRequest, ListContainerStatsResponse];
  podSandboxStats: [PodSandboxStatsRequest, PodSandboxStatsResponse];
  listPodSandboxStats: [ListPodSandboxStatsRequest, ListPodSandboxStatsResponse];
  checkpointContainer: [CheckpointContainerRequest, Empty];
  updateRuntimeConfig: [UpdateRuntimeConfigRequest, Empty];
  runtimeConfig: [Empty, RuntimeConfigResponse];
}

export interface ImageRpcs {
  listImages: [ListImagesRequest, ListImagesResponse];
  imageStatus: [ImageStatusRequest, ImageStatusResponse];
  pullImage: [PullImageRequest, PullImageResponse];
  removeImage: [RemoveImageRequest, Empty];
  imageFsInfo: [Empty, ImageFsInfoResponse];
}

export type CriRpcs = RuntimeRpcs & ImageRpcs;
export type RpcName = keyof CriRpcs;
export type RpcRequest<N extends RpcName> = CriRpcs[N][0];
export type RpcResponse<N extends RpcName> = CriRpcs[N][1];
