// A connection to localhost:PORT the way containerd makes one for
// port-forward inside a sandbox's network namespace: IPv4 (127.0.0.1) first,
// then IPv6 (::1), one after the other. Used in the agent for hostNetwork
// pods and in the namespace helper (./netns-dial-helper.ts) for the others.

import { connect, type Socket } from "node:net";

/** Why both attempts failed: each one's socket error code (ECONNREFUSED …). */
export interface LoopbackFailure {
  readonly v4: string;
  readonly v6: string;
}

function attempt(host: string, port: number): Promise<Socket | string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    // Nothing is read until the caller wants it: a server's first words (a banner) stay in the kernel.
    socket.pause();
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
  });
}

/** The connected socket (paused), or why neither address answered. */
export async function dialLoopback(port: number): Promise<Socket | LoopbackFailure> {
  const v4 = await attempt("127.0.0.1", port);
  if (typeof v4 !== "string") return v4;
  const v6 = await attempt("::1", port);
  if (typeof v6 !== "string") return v6;
  return { v4, v6 };
}

/** A socket error code in the words of Go's net package. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: "connect: connection refused",
  EHOSTUNREACH: "connect: no route to host",
  ENETUNREACH: "connect: network is unreachable",
  EADDRNOTAVAIL: "connect: cannot assign requested address",
  EAFNOSUPPORT: "socket: address family not supported by protocol",
  ETIMEDOUT: "i/o timeout",
  ECONNRESET: "read: connection reset by peer",
};

/**
 * containerd's words for a failed dial inside the sandbox's namespace
 * (`netns` its path, "host" for a hostNetwork pod), which its streaming
 * server puts after `error forwarding port P to pod SANDBOX, uid : `.
 */
export function loopbackFailureText(netns: string, sandboxId: string, port: number, f: LoopbackFailure): string {
  const reason = (code: string) => REASONS[code] ?? code;
  return `failed to execute portforward in network namespace ${JSON.stringify(netns)}: failed to connect to localhost:${port} inside namespace ${JSON.stringify(sandboxId)}, IPv4: dial tcp4 127.0.0.1:${port}: ${reason(f.v4)} IPv6 dial tcp6 [::1]:${port}: ${reason(f.v6)} `;
}
