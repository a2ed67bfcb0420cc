// Loads runtime-v1.proto once and hands out the two CRI services' definitions,
// for the client and for servers (the embedded runtime, test fakes). The
// decoding options here fix the message shapes that types.ts describes.

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { join } from "node:path";
import { packageRoot } from "../../component/index.js";
import type { RpcName } from "./types.js";

/** The .proto ships in the source tree; tsc does not copy it into dist/. */
export function protoPath(): string {
  return join(packageRoot(), "src", "nodeagent", "cri", "runtime-v1.proto");
}

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

interface ServiceConstructor {
  new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions): grpc.Client;
  service: grpc.ServiceDefinition;
}

export interface CriServices {
  RuntimeService: ServiceConstructor;
  ImageService: ServiceConstructor;
}

let loaded: CriServices | undefined;

/** The runtime.v1 RuntimeService and ImageService (client constructors with `.service`). */
export function criServices(): CriServices {
  if (loaded !== undefined) return loaded;
  const definition = protoLoader.loadSync(protoPath(), LOADER_OPTIONS);
  const root = grpc.loadPackageDefinition(definition) as unknown as { runtime: { v1: CriServices } };
  loaded = { RuntimeService: root.runtime.v1.RuntimeService, ImageService: root.runtime.v1.ImageService };
  return loaded;
}

/** The service each RPC belongs to, and its method name on the wire. */
export const RPC_TABLE = {
  version: ["RuntimeService", "Version"],
  status: ["RuntimeService", "Status"],
  runPodSandbox: ["RuntimeService", "RunPodSandbox"],
  stopPodSandbox: ["RuntimeService", "StopPodSandbox"],
  removePodSandbox: ["RuntimeService", "RemovePodSandbox"],
  podSandboxStatus: ["RuntimeService", "PodSandboxStatus"],
  listPodSandbox: ["RuntimeService", "ListPodSandbox"],
  createContainer: ["RuntimeService", "CreateContainer"],
  startContainer: ["RuntimeService", "StartContainer"],
  stopContainer: ["RuntimeService", "StopContainer"],
  removeContainer: ["RuntimeService", "RemoveContainer"],
  listContainers: ["RuntimeService", "ListContainers"],
  containerStatus: ["RuntimeService", "ContainerStatus"],
  updateContainerResources: ["RuntimeService", "UpdateContainerResources"],
  reopenContainerLog: ["RuntimeService", "ReopenContainerLog"],
  execSync: ["RuntimeService", "ExecSync"],
  attach: ["RuntimeService", "Attach"],
  containerStats: ["RuntimeService", "ContainerStats"],
  listContainerStats: ["RuntimeService", "ListContainerStats"],
  podSandboxStats: ["RuntimeService", "PodSandboxStats"],
  listPodSandboxStats: ["RuntimeService", "ListPodSandboxStats"],
  checkpointContainer: ["RuntimeService", "CheckpointContainer"],
  updateRuntimeConfig: ["RuntimeService", "UpdateRuntimeConfig"],
  runtimeConfig: ["RuntimeService", "RuntimeConfig"],
  listImages: ["ImageService", "ListImages"],
  imageStatus: ["ImageService", "ImageStatus"],
  pullImage: ["ImageService", "PullImage"],
  removeImage: ["ImageService", "RemoveImage"],
  imageFsInfo: ["ImageService", "ImageFsInfo"],
} as const satisfies Record<RpcName, readonly ["RuntimeService" | "ImageService", string]>;
