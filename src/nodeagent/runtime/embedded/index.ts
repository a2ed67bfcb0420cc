// The embedded container runtime: CRI over a UNIX socket, containers as host
// processes in their own namespaces, images imported locally (docs/runtime.md).

export { startEmbeddedRuntime, DEFAULT_EMBEDDED_ROOT, type EmbeddedRuntime, type StartEmbeddedRuntimeOptions } from "./server.js";
export { EmbeddedRuntimeService, RUNTIME_NAME, RUNTIME_VERSION, type EmbeddedRuntimeOptions, type CloseOptions } from "./runtime.js";
export { RuntimeError } from "./errors.js";
