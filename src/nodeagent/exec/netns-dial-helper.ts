// The process the node agent runs inside a pod's network namespace
// (`nsenter --net=NSPATH node netns-dial-helper.js`, ./netns-dialer.ts) so
// port-forward reaches servers listening on the pod's 127.0.0.1, as upstream's
// runtimes dial `localhost` in the sandbox's namespace. Node cannot setns(2)
// itself; this helper connects inside the namespace and hands each connected
// socket to the agent over the IPC channel (the file descriptor itself, via
// SCM_RIGHTS), so the bytes never pass through this process: the agent reads
// and writes the pod's connection directly, with the kernel's backpressure
// and half-close.
//
// Messages from the agent: {id, port}. Answers: {id} with the socket as the
// handle, or {id, error: {v4, v6}} (each attempt's error code). It exits when the agent goes away.

import { dialLoopback } from "./loopback-dial.js";

interface DialRequest {
  id: number;
  port: number;
}

if (typeof process.send !== "function") {
  process.stderr.write("netns-dial-helper: must be started with an IPC channel\n");
  process.exit(2);
}

process.on("message", (msg: DialRequest) => {
  const { id, port } = msg;
  if (!Number.isInteger(id) || !Number.isInteger(port) || port < 1 || port > 65535) return;
  void dialLoopback(port).then((r) => {
    if ("v4" in r) process.send!({ id, error: r });
    else process.send!({ id }, r);
  });
});
process.on("disconnect", () => process.exit(0));
