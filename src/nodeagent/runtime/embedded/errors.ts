// The embedded runtime's one error class: a CRI failure with the gRPC status
// code the server answers with (server.ts turns it into the call's status).

import type { status as Code } from "@grpc/grpc-js";

export class RuntimeError extends Error {
  readonly code: Code;
  constructor(code: Code, message: string) {
    super(message);
    this.name = "RuntimeError";
    this.code = code;
  }
}
