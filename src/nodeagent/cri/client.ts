// CriClient: the node agent's typed client for a CRI runtime (runtime.v1 over
// gRPC on a UNIX socket, seed 001 "What the service does" 4). One method per
// RPC, named as the RPC in lowerCamelCase; each call has a deadline, and a
// failure rejects with a CriError carrying the gRPC status code and message.
// Calls go over unix-h2.ts, a lean unary gRPC transport on node:http2 (grpc-js's
// per-call machinery was a large share of the agent's CPU per pod start); the
// messages are encoded and decoded with the .proto's definitions (proto.ts).
// A runtime in the same process (the embedded one) can be called without the
// socket: messages still go through the protobuf encoding, so they look
// exactly as over gRPC, but HTTP/2 is left out.

import * as grpc from "@grpc/grpc-js";
import { criServices, RPC_TABLE } from "./proto.js";
import type { DeepPartial, RpcName, RpcRequest, RpcResponse } from "./types.js";
import { UnixH2Channel } from "./unix-h2.js";

/** Upstream's default for a runtime request (kubelet --runtime-request-timeout). */
export const DEFAULT_TIMEOUT_MS = 2 * 60_000;

export interface CriClientOptions {
  /** The runtime socket, `unix:///run/containerd/containerd.sock` (a bare absolute path is taken as one). */
  endpoint: string;
  /** The image service socket; defaults to `endpoint`. */
  imageEndpoint?: string;
  /** Deadline of each call unless the call names its own. */
  timeoutMs?: number;
  /** The runtime's own handler when it runs in this process: calls skip the socket (the endpoint stays for others). */
  inProcess?: InProcessRuntime;
}

/**
 * A CRI runtime served in this process: answers one RPC with the response
 * message, or throws an error with a gRPC `code` (and its message as details).
 */
export type InProcessRuntime = (name: RpcName, request: unknown) => unknown;

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A failed CRI call: `code` is the gRPC status (grpc.status), `details` the runtime's own message. */
export class CriError extends Error {
  readonly code: grpc.status;
  readonly details: string;
  readonly rpc: string;
  constructor(rpc: string, code: grpc.status, details: string, options?: { cause?: unknown }) {
    super(`${rpc}: ${grpc.status[code] ?? code}: ${details}`, options);
    this.name = "CriError";
    this.rpc = rpc;
    this.code = code;
    this.details = details;
  }
  get codeName(): string {
    return grpc.status[this.code] ?? String(this.code);
  }
}

export function isCriError(err: unknown, code?: grpc.status): err is CriError {
  return err instanceof CriError && (code === undefined || err.code === code);
}

/** Normalizes `/path`, `unix:/path` and `unix:///path` to the form grpc-js dials. */
export function unixTarget(endpoint: string): string {
  if (endpoint.startsWith("unix://")) return endpoint;
  if (endpoint.startsWith("unix:")) return `unix://${endpoint.slice("unix:".length)}`;
  if (endpoint.startsWith("/")) return `unix://${endpoint}`;
  throw new Error(`CRI endpoint ${JSON.stringify(endpoint)}: only unix:// sockets are supported`);
}

/** Container lists and exec output can be large; upstream allows 16 MiB. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024 + 1024;

type Rpcs = { [N in RpcName]: (request?: DeepPartial<RpcRequest<N>>, options?: CallOptions) => Promise<RpcResponse<N>> };

// Declaration merging gives the class one typed method per RPC; the prototype
// methods are installed from RPC_TABLE below, so the list lives in one place.
export interface CriClient extends Rpcs {}

export class CriClient {
  readonly #runtime: UnixH2Channel;
  readonly #image: UnixH2Channel;
  readonly #timeoutMs: number;
  readonly #inProcess: InProcessRuntime | undefined;
  /** Image calls go to the in-process runtime too, unless a separate image endpoint is configured. */
  readonly #imagesInProcess: boolean;

  constructor(options: CriClientOptions) {
    this.#inProcess = options.inProcess;
    const runtimeTarget = unixTarget(options.endpoint);
    const imageTarget = unixTarget(options.imageEndpoint ?? options.endpoint);
    this.#runtime = new UnixH2Channel(runtimeTarget.slice("unix://".length));
    this.#image = imageTarget === runtimeTarget ? this.#runtime : new UnixH2Channel(imageTarget.slice("unix://".length));
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#imagesInProcess = imageTarget === runtimeTarget;
  }

  /** Resolves once the runtime socket accepts a connection, or rejects at the deadline. */
  async waitForReady(timeoutMs = this.#timeoutMs): Promise<void> {
    try {
      await this.#runtime.waitForReady(Date.now() + timeoutMs);
    } catch (err) {
      throw new CriError("connect", grpc.status.UNAVAILABLE, (err as Error).message, { cause: err });
    }
  }

  close(): void {
    this.#image.close();
    this.#runtime.close();
  }

  /** One unary call with a deadline; the generic body behind every RPC method. */
  call<N extends RpcName>(name: N, request: DeepPartial<RpcRequest<N>> = {} as DeepPartial<RpcRequest<N>>, options: CallOptions = {}): Promise<RpcResponse<N>> {
    const [service] = RPC_TABLE[name];
    // ExecSync may run for its own timeout; the deadline covers that on top (as upstream's agent does).
    const execSeconds = name === "execSync" ? Number((request as { timeout?: unknown }).timeout ?? 0) : 0;
    const deadline = Date.now() + (options.timeoutMs ?? this.#timeoutMs + execSeconds * 1000);
    if (this.#inProcess !== undefined && (service === "RuntimeService" || this.#imagesInProcess)) return this.#callInProcess(name, request, deadline, options.signal);
    return this.#callSocket(name, request, deadline, options.signal);
  }

  async #callSocket<N extends RpcName>(name: N, request: DeepPartial<RpcRequest<N>>, deadline: number, signal: AbortSignal | undefined): Promise<RpcResponse<N>> {
    const [service, rpc] = RPC_TABLE[name];
    const method = criServices()[service].service[rpc]!;
    const channel = service === "RuntimeService" ? this.#runtime : this.#image;
    let answer: Buffer;
    try {
      answer = await channel.unary(method.path, method.requestSerialize(request), { deadline, signal, maxReceive: MAX_MESSAGE_BYTES });
    } catch (err) {
      const { code, details } = err as { code?: unknown; details?: unknown };
      throw new CriError(rpc, typeof code === "number" ? code : grpc.status.UNKNOWN, typeof details === "string" ? details : String(err), { cause: err });
    }
    try {
      return method.responseDeserialize(answer) as RpcResponse<N>;
    } catch (err) {
      throw new CriError(rpc, grpc.status.INTERNAL, `Response message parsing error: ${(err as Error).message}`, { cause: err });
    }
  }

  /** The same call without the socket: request and response are encoded and decoded as on the wire; the deadline and abort hold as they do there. */
  async #callInProcess<N extends RpcName>(name: N, request: DeepPartial<RpcRequest<N>>, deadline: number, signal: AbortSignal | undefined): Promise<RpcResponse<N>> {
    const [service, rpc] = RPC_TABLE[name];
    const method = criServices()[service].service[rpc]!;
    if (signal?.aborted) throw new CriError(rpc, grpc.status.CANCELLED, "aborted before the call");
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const answer = Promise.resolve().then(() => this.#inProcess!(name, method.requestDeserialize(method.requestSerialize(request))));
      const response = await Promise.race([
        answer,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new CriError(rpc, grpc.status.DEADLINE_EXCEEDED, "Deadline exceeded")), Math.max(0, deadline - Date.now()));
          onAbort = () => reject(new CriError(rpc, grpc.status.CANCELLED, "Cancelled on client"));
          signal?.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      return method.responseDeserialize(method.responseSerialize(response)) as RpcResponse<N>;
    } catch (err) {
      if (err instanceof CriError) throw err;
      const code = typeof (err as { code?: unknown }).code === "number" ? (err as { code: grpc.status }).code : grpc.status.UNKNOWN;
      throw new CriError(rpc, code, err instanceof Error ? err.message : String(err), { cause: err });
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }
}

for (const name of Object.keys(RPC_TABLE) as RpcName[]) {
  Object.defineProperty(CriClient.prototype, name, {
    value: function (this: CriClient, request?: unknown, options?: CallOptions) {
      return this.call(name, request as never, options);
    },
    writable: true,
    configurable: true,
  });
}
