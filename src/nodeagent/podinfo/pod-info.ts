// The local pod-info gRPC interface (seed 001, "Pod-info gRPC interface";
// alpha, gate PodsAPI, off by default): service `Pods` on the UNIX socket
// <root-dir>/pods/<agent name>.sock, mode 0600 (local administrators only).
// ListPods, GetPod(podUID) and WatchPods (one message per change of a pod's
// local state) answer from the agent's own knowledge (its pods and their
// latest statuses), so they work without the control plane. Pods are sent in
// their protobuf encoding; a field mask in the call metadata keeps only the
// fields named. Until the agent's state is initialized after a (re)start,
// every call fails with FAILED_PRECONDITION; an unknown UID is NOT_FOUND.

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Pod, PodStatus } from "../../api/core/types.js";
import { builtinModules } from "../../api/index.js";
import { packageRoot } from "../../component/index.js";
import { encodeMessage } from "../../machinery/codec/protobuf/index.js";
import { SchemaRegistry } from "../../machinery/schema.js";

export const POD_TYPE = "io.k8s.api.core.v1.Pod";
const LOADER: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, arrays: true, objects: true, oneofs: true };

let service: grpc.ServiceClientConstructor | undefined;

/** The v1alpha1 Pods service (for the agent, and for clients in tests). */
export function podsService(): grpc.ServiceClientConstructor {
  if (service) return service;
  const def = protoLoader.loadSync(join(packageRoot(), "src", "nodeagent", "podinfo", "pods-v1alpha1.proto"), LOADER);
  service = (grpc.loadPackageDefinition(def) as unknown as { v1alpha1: { Pods: grpc.ServiceClientConstructor } }).v1alpha1.Pods;
  return service;
}

let registry: SchemaRegistry | undefined;
function schemas(): SchemaRegistry {
  if (registry) return registry;
  registry = new SchemaRegistry();
  for (const m of builtinModules()) m.registerSchemas(registry);
  return registry;
}

/** The pod's top-level fields a mask may name first. */
const TOP = new Set(["apiVersion", "kind", "metadata", "spec", "status"]);

/** The mask's paths from the call metadata (field-mask: comma-separated; field-mask-bin: FieldMask bytes), or undefined for none. */
export function fieldMask(metadata: grpc.Metadata): string[] | undefined {
  const paths: string[] = [];
  for (const v of metadata.get("field-mask")) paths.push(...String(v).split(",").map((p) => p.trim()).filter(Boolean));
  for (const v of metadata.get("field-mask-bin")) paths.push(...decodeFieldMask(Buffer.isBuffer(v) ? v : Buffer.from(String(v))));
  return paths.length > 0 ? paths : undefined;
}

/** google.protobuf.FieldMask: `repeated string paths = 1`. */
function decodeFieldMask(b: Buffer): string[] {
  const out: string[] = [];
  let i = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (i >= b.length) throw new Error("truncated field mask");
      const byte = b[i++]!;
      v += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return v;
      shift += 7;
    }
  };
  while (i < b.length) {
    const tag = varint();
    if (tag !== 0x0a) throw new Error(`unexpected field ${tag >> 3} in a field mask`);
    const n = varint();
    out.push(b.subarray(i, i + n).toString("utf8"));
    i += n;
  }
  return out;
}

/** Only the fields the mask names (dotted paths); an unknown top-level field is an error. */
export function applyMask(pod: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const parts = path.split(".");
    if (!TOP.has(parts[0]!) || parts.some((p) => p === "")) throw new MaskError(`invalid field mask path ${JSON.stringify(path)}`);
    let from: unknown = pod;
    for (const p of parts) from = from !== null && typeof from === "object" ? (from as Record<string, unknown>)[p] : undefined;
    if (from === undefined) continue;
    let to = out;
    for (const p of parts.slice(0, -1)) to = (to[p] ??= {}) as Record<string, unknown>;
    to[parts.at(-1)!] = from;
  }
  return out;
}

class MaskError extends Error {}

export interface PodInfoOptions {
  /** <root-dir>/pods/<agent name>.sock. */
  socket: string;
  /** The agent's pods with their latest statuses. */
  pods: () => readonly { pod: Pod; status: PodStatus }[];
  /** Pod state changes (status undefined: the pod left); returns the unsubscribe. */
  subscribe: (fn: (uid: string, pod: Pod, status: PodStatus | undefined) => void) => () => void;
  log?: (line: string) => void;
}

const NOT_READY = "the node agent's pod state is not initialized yet (it is starting)";

export class PodInfoServer {
  readonly #o: PodInfoOptions;
  #server: grpc.Server | undefined;
  #initialized = false;
  readonly #watches = new Set<grpc.ServerWritableStream<object, object>>();

  constructor(options: PodInfoOptions) {
    this.#o = options;
  }

  /** From now on calls are answered (the agent's state was rebuilt after its start). */
  markInitialized(): void {
    this.#initialized = true;
  }

  async start(): Promise<void> {
    const socket = this.#o.socket;
    mkdirSync(dirname(socket), { recursive: true, mode: 0o750 });
    rmSync(socket, { force: true });
    const server = new grpc.Server();
    const encode = (pod: Pod, status: PodStatus | undefined, mask: string[] | undefined): Buffer => {
      const full = { ...pod, apiVersion: pod.apiVersion ?? "v1", kind: pod.kind ?? "Pod", ...(status ? { status } : {}) } as Record<string, unknown>;
      return Buffer.from(encodeMessage(mask ? applyMask(full, mask) : full, POD_TYPE, schemas()));
    };
    /** The mask of a call, or a gRPC error for the callback. */
    const maskOf = (metadata: grpc.Metadata): { mask?: string[]; error?: grpc.ServiceError } => {
      try {
        const mask = fieldMask(metadata);
        if (mask) applyMask({}, mask); // validates the paths
        return mask ? { mask } : {};
      } catch (err) {
        return { error: failure(grpc.status.INVALID_ARGUMENT, (err as Error).message) };
      }
    };
    server.addService(podsService().service, {
      ListPods: (call: grpc.ServerUnaryCall<object, object>, done: grpc.sendUnaryData<object>) => {
        if (!this.#initialized) return done(failure(grpc.status.FAILED_PRECONDITION, NOT_READY));
        const { mask, error } = maskOf(call.metadata);
        if (error) return done(error);
        done(null, { pods: this.#o.pods().map((p) => encode(p.pod, p.status, mask)) });
      },
      GetPod: (call: grpc.ServerUnaryCall<{ podUID: string }, object>, done: grpc.sendUnaryData<object>) => {
        if (!this.#initialized) return done(failure(grpc.status.FAILED_PRECONDITION, NOT_READY));
        const { mask, error } = maskOf(call.metadata);
        if (error) return done(error);
        const uid = call.request.podUID;
        if (uid === "") return done(failure(grpc.status.INVALID_ARGUMENT, "podUID is required"));
        const p = this.#o.pods().find((x) => x.pod.metadata.uid === uid);
        if (p === undefined) return done(failure(grpc.status.NOT_FOUND, `pod ${uid} not found`));
        done(null, { pod: encode(p.pod, p.status, mask) });
      },
      WatchPods: (call: grpc.ServerWritableStream<object, object>) => {
        if (!this.#initialized) return void call.emit("error", failure(grpc.status.FAILED_PRECONDITION, NOT_READY));
        const { mask, error } = maskOf(call.metadata);
        if (error) return void call.emit("error", error);
        this.#watches.add(call);
        const unsubscribe = this.#o.subscribe((_uid, pod, status) => {
          try {
            call.write({ pod: encode(pod, status ?? pod.status, mask) });
          } catch (err) {
            this.#o.log?.(`pod-info: a watch could not be written: ${(err as Error).message}`);
          }
        });
        const end = () => {
          unsubscribe();
          this.#watches.delete(call);
        };
        call.on("cancelled", end);
        call.on("close", end);
        call.on("error", end);
      },
    });
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    chmodSync(socket, 0o600);
    this.#server = server;
  }

  async stop(): Promise<void> {
    for (const w of this.#watches) w.end();
    this.#watches.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server) {
      server.forceShutdown();
      rmSync(this.#o.socket, { force: true });
    }
  }
}

function failure(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}
