// Serves the embedded runtime over CRI: a @grpc/grpc-js server on a UNIX
// socket with the same runtime.v1 definition the client uses. This is the
// runtime the node agent uses when no runtime endpoint is configured.

import * as grpc from "@grpc/grpc-js";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
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
  /** `unix:///…/embedded.sock`, for CriClient. */
  readonly endpoint: string;
  readonly service: EmbeddedRuntimeService;
  /** Stops serving; kills the containers still running unless `stopContainers: false` (then the next runtime on this root re-adopts them). */
  close(options?: CloseOptions): Promise<void>;
}

type Handler = (request: never) => unknown;

export async function startEmbeddedRuntime(options: StartEmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
  const socket = options.socket ?? join(options.root, "embedded.sock");
  if (Buffer.byteLength(socket) > 107) throw new Error(`socket path ${socket} is longer than a UNIX socket allows (107 bytes)`);
  mkdirSync(dirname(socket), { recursive: true });
  rmSync(socket, { force: true }); // a socket left by a previous run
  const service = new EmbeddedRuntimeService(options);
  const server = new grpc.Server({ "grpc.max_receive_message_length": 16 * 1024 * 1024 + 1024, "grpc.max_send_message_length": 2 * 16 * 1024 * 1024 + 1024 });
  const handlers: Record<"RuntimeService" | "ImageService", grpc.UntypedServiceImplementation> = { RuntimeService: {}, ImageService: {} };
  for (const [name, [svc, rpc]] of Object.entries(RPC_TABLE) as [RpcName, (typeof RPC_TABLE)[RpcName]][]) {
    const method = (service[name] as Handler).bind(service);
    const handle: grpc.handleUnaryCall<never, unknown> = (call, done) => {
      Promise.resolve()
        .then(() => method(call.request))
        .then((response) => done(null, response as never))
        .catch((err: unknown) => done({ code: err instanceof RuntimeError ? err.code : grpc.status.UNKNOWN, details: err instanceof Error ? err.message : String(err) }));
    };
    handlers[svc][rpc] = handle as grpc.UntypedHandleCall;
  }
  const { RuntimeService, ImageService } = criServices();
  server.addService(RuntimeService.service, handlers.RuntimeService);
  server.addService(ImageService.service, handlers.ImageService);
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  let closed: Promise<void> | undefined;
  return {
    endpoint: `unix://${socket}`,
    service,
    close(options) {
      closed ??= (async () => {
        await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        await service.close(options);
        rmSync(socket, { force: true });
      })();
      return closed;
    },
  };
}
