// Typed access to the etcd v3 messages in rpc.proto: the TypeScript shapes of
// the messages we send and receive, and each method's path and (de)serializers,
// loaded once with @grpc/proto-loader. Nothing here talks to the network.

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadSync, type MethodDefinition } from "@grpc/proto-loader";

// Field names keep the .proto's snake_case (keepCase); int64 fields decode to
// numbers (revisions stay far below 2^53); bytes decode to Buffers.

export interface ResponseHeader {
  cluster_id?: number;
  revision: number;
  member_id: number;
  raft_term: number;
}

export interface MvccKeyValue {
  key: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  value: Buffer;
}

export interface MvccEvent {
  type: "PUT" | "DELETE";
  kv: MvccKeyValue | null;
  prev_kv: MvccKeyValue | null;
}

export interface RangeRequest {
  key: Uint8Array;
  range_end?: Uint8Array;
  limit?: number;
  revision?: number;
  count_only?: boolean;
  keys_only?: boolean;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: MvccKeyValue[];
  more: boolean;
  count: number;
}

export interface PutRequest {
  key: Uint8Array;
  value: Uint8Array;
  prev_kv?: boolean;
}

export interface PutResponse {
  header: ResponseHeader;
  prev_kv: MvccKeyValue | null;
}

export interface DeleteRangeRequest {
  key: Uint8Array;
  range_end?: Uint8Array;
  prev_kv?: boolean;
}

export interface DeleteRangeResponse {
  header: ResponseHeader;
  deleted: number;
  prev_kvs: MvccKeyValue[];
}

export type RequestOp =
  | { request_range: RangeRequest }
  | { request_put: PutRequest }
  | { request_delete_range: DeleteRangeRequest };

export interface ResponseOp {
  response_range?: RangeResponse | null;
  response_put?: PutResponse | null;
  response_delete_range?: DeleteRangeResponse | null;
}

export type Compare = {
  key: Uint8Array;
  result: "EQUAL" | "GREATER" | "LESS" | "NOT_EQUAL";
} & (
  | { target: "VERSION"; version: number }
  | { target: "CREATE"; create_revision: number }
  | { target: "MOD"; mod_revision: number }
);

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface CompactionRequest {
  revision: number;
  physical?: boolean;
}

export interface CompactionResponse {
  header: ResponseHeader;
}

export interface StatusResponse {
  header: ResponseHeader;
  version: string;
  dbSize: number;
  leader: number;
}

export type WatchRequest =
  | {
      create_request: {
        key: Uint8Array;
        range_end?: Uint8Array;
        start_revision?: number;
        progress_notify?: boolean;
        prev_kv?: boolean;
      };
    }
  | { cancel_request: { watch_id: number } }
  | { progress_request: Record<string, never> };

export interface WatchResponse {
  header: ResponseHeader | null;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  events: MvccEvent[];
}

export interface SnapshotResponse {
  remaining_bytes: number;
  blob: Buffer;
}

/** A cluster member; its ID is a decimal string (a uint64 does not fit a number). */
export interface Member {
  ID: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface MemberAddResponse {
  member: Member;
  members: Member[];
}

export interface MemberListResponse {
  members: Member[];
}

/** A method's gRPC path and its serializers, typed by request and response. */
export interface Method<Req, Res> {
  readonly path: string;
  readonly serialize: (value: Req) => Buffer;
  readonly deserialize: (bytes: Buffer) => Res;
}

/** The methods orch calls, keyed by a short name. */
export interface EtcdMethods {
  range: Method<RangeRequest, RangeResponse>;
  put: Method<PutRequest, PutResponse>;
  deleteRange: Method<DeleteRangeRequest, DeleteRangeResponse>;
  txn: Method<TxnRequest, TxnResponse>;
  compact: Method<CompactionRequest, CompactionResponse>;
  status: Method<Record<string, never>, StatusResponse>;
  watch: Method<WatchRequest, WatchResponse>;
  snapshot: Method<Record<string, never>, SnapshotResponse>;
  memberAdd: Method<{ peerURLs: string[] }, MemberAddResponse>;
  memberRemove: Method<{ ID: string }, MemberListResponse>;
  memberList: Method<Record<string, never>, MemberListResponse>;
}

let loaded: EtcdMethods | undefined;

/** The etcd methods, loading rpc.proto on first use. */
export function etcdMethods(): EtcdMethods {
  loaded ??= load();
  return loaded;
}

function load(): EtcdMethods {
  const options = { keepCase: true, longs: Number, enums: String, bytes: Buffer, defaults: true, oneofs: true };
  const definition = loadSync(protoPath(), options);
  // Member IDs are random uint64s: decoded as strings so none loses its low bits.
  const membership = loadSync(protoPath(), { ...options, longs: String });
  const method = <Req, Res>(service: string, name: string): Method<Req, Res> => {
    const services = (service === "Cluster" ? membership : definition)[`etcdserverpb.${service}`];
    // A ServiceDefinition maps method names to MethodDefinitions; anything else means rpc.proto is broken.
    const def = (services as Record<string, MethodDefinition<object, object>> | undefined)?.[name];
    if (def === undefined || typeof def.path !== "string") {
      throw new Error(`rpc.proto lacks etcdserverpb.${service}/${name}`);
    }
    return {
      path: def.path,
      serialize: def.requestSerialize as (value: Req) => Buffer,
      deserialize: def.responseDeserialize as (bytes: Buffer) => Res,
    };
  };
  return {
    range: method("KV", "Range"),
    put: method("KV", "Put"),
    deleteRange: method("KV", "DeleteRange"),
    txn: method("KV", "Txn"),
    compact: method("KV", "Compact"),
    status: method("Maintenance", "Status"),
    watch: method("Watch", "Watch"),
    snapshot: method("Maintenance", "Snapshot"),
    memberAdd: method("Cluster", "MemberAdd"),
    memberRemove: method("Cluster", "MemberRemove"),
    memberList: method("Cluster", "MemberList"),
  };
}

/**
 * Where rpc.proto is at run time. The build does not copy non-TS files, so the
 * compiled module (dist/src/storage/etcd/) looks beside itself first, then in
 * the source tree at the same relative path from the package root.
 */
export function protoPath(): string {
  const candidates = [
    new URL("./rpc.proto", import.meta.url),
    new URL("../../../../src/storage/etcd/rpc.proto", import.meta.url),
  ];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error(`etcd rpc.proto not found (looked at ${candidates.map((u) => fileURLToPath(u)).join(", ")})`);
}
