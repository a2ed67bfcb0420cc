// Serves the embedded runtime over CRI: a @grpc/grpc-js server on a UNIX
// socket with the same runtime.v1 definition the client uses, and the same
// handler for a CriClient in this process (`inProcess`). This is the runtime
// the node agent uses when no runtime endpoint is configured.

import * as grpc from "@grpc/grpc-js";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { InProcessRuntime } from "../../cri/client.js";
import { criServices, RPC_TABLE } from "../../cri/proto.js";
import type { RpcName } from "../../cri/types.js";
import { RuntimeError } from "./errors.js";
import { EmbeddedRuntimeService, type CloseOptions, type EmbeddedRuntimeOptions } from "./runtime.js";

/** Where the embedded runtime lives when nothing else is configured. */
export const DEFAULT_EMBEDDED_ROOT = "/var/lib/nodeagent/runtime";

export interface StartEmbeddedRuntimeOptions extends EmbeddedRuntimeOptions {
  /** Socket path; default <root>/embedded.sock. */
  socket?: string;
}

export interface EmbeddedRuntime {
  /** The CRI handler for a CriClient in this process (`new CriClient({ endpoint, inProcess })`): no socket, same messages. */
  readonly inProcess: InProcessRuntime;
  /** `unix:///…/embedded.sock`, for CriClient. */
  readonly endpoint: string;
  readonly service: EmbeddedRuntimeService;
  /** Stops serving; kills the containers still running unless `stopContainers: false` (then the next runtime on this root re-adopts them). */
  close(options?: CloseOptions): Promise<void>;
}

type Handler = (request: never) => unknown;

export async function startEmbeddedRuntime(options: StartEmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
  // Absolute: `unix://.orch/x.sock` would read ".orch" as the URI's authority.
  const socket = resolve(options.socket ?? join(options.root, "embedded.sock"));
  if (Buffer.byteLength(socket) > 107) throw new Error(`socket path ${socket} is longer than a UNIX socket allows (107 bytes)`);
  mkdirSync(dirname(socket), { recursive: true });
  rmSync(socket, { force: true }); // a socket left by a previous run
  const service = new EmbeddedRuntimeService(options);
  const server = new grpc.Server({ "grpc.max_receive_message_length": 16 * 1024 * 1024 + 1024, "grpc.max_send_message_length": 2 * 16 * 1024 * 1024 + 1024 });
  const handlers: Record<"RuntimeService" | "ImageService", grpc.UntypedServiceImplementation> = { RuntimeService: {}, ImageService: {} };
  const inProcess: InProcessRuntime = async (name, request) => {
    try {
      const response = await (service[name] as Handler).call(service, request as never);
      await service.settled(); // what the answer reports is on disk
      return response;
    } catch (err) {
      throw err instanceof RuntimeError ? err : new RuntimeError(grpc.status.UNKNOWN, err instanceof Error ? err.message : String(err));
    }
  };
  for (const [name, [svc, rpc]] of Object.entries(RPC_TABLE) as [RpcName, (typeof RPC_TABLE)[RpcName]][]) {
    const handle: grpc.handleUnaryCall<never, unknown> = (call, done) => {
      (inProcess(name, call.request) as Promise<unknown>)
        .then((response) => done(null, response as never))
        .catch((err: RuntimeError) => done({ code: err.code, details: err.message }));
    };
    handlers[svc][rpc] = handle as grpc.UntypedHandleCall;
  }
  const { RuntimeService, ImageService } = criServices();
  server.addService(RuntimeService.service, handlers.RuntimeService);
  server.addService(ImageService.service, handlers.ImageService);
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  let closed: Promise<void> | undefined;
  return {
    inProcess,
    endpoint: `unix://${socket}`,
    service,
    close(options) {
      closed ??= (async () => {
        await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        await service.close(options);
        rmSync(socket, { force: true });
        await service.settled().catch(() => {}); // the last records on disk
      })();
      return closed;
    },
  };
}
