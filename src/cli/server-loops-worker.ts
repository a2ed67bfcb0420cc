// The control loops' thread of `orch server` (server-loops-thread.ts starts
// it): rebuilds the server's flags, runs the controller manager and the
// scheduler until told to stop, and sends its log lines to the main thread.

import { parentPort, workerData } from "node:worker_threads";
import { ParsedFlags } from "../component/index.js";
import { watchStalls } from "../component/stall-watch.js";
import { featureGatesOf } from "./command.js";
import { serverFlags } from "./server-flags.js";
import { startControlLoops } from "./server-loops.js";
import type { ControlLoopsMessage, ControlLoopsThreadData } from "./server-loops-thread.js";

const data = workerData as ControlLoopsThreadData;
const port = parentPort!;
const send = (m: ControlLoopsMessage) => port.postMessage(m);
const log = (line: string) => send({ type: "log", line });
const stop = new AbortController();
port.on("message", (m: { type: string }) => {
  if (m.type === "stop") stop.abort();
});

const flags = new ParsedFlags({ decls: serverFlags, values: data.values as never, set: new Set(data.set), args: [], warnings: [] });
const output = { write: (chunk: string) => log(chunk.replace(/\n$/, "")) };
const context = { command: data.command, featureGates: featureGatesOf(data.values), signal: stop.signal, stdout: output, stderr: output };
// This thread's own turns: a stall here holds up controllers and the scheduler, not the API server.
watchStalls({ log: (line) => log(`${data.command} (control loops' thread): ${line}`), signal: stop.signal });
try {
  const loops = await startControlLoops({ flags, context, kubeconfigPath: data.kubeconfigPath, log });
  send({ type: "started", ports: [...loops.ports] });
  await loops.done;
} catch (err) {
  send({ type: "failed", message: (err as Error).message });
}
port.close();
