// The container runtime interface (CRI runtime.v1): message types, the typed
// client the node agent uses, and the service definitions a server implements.

export { CriClient, CriError, isCriError, unixTarget, DEFAULT_TIMEOUT_MS, type CriClientOptions, type CallOptions, type InProcessRuntime } from "./client.js";
export { criServices, protoPath, RPC_TABLE, type CriServices } from "./proto.js";
export type * from "./types.js";
export { status as GrpcStatus } from "@grpc/grpc-js";
