// `orch server`'s control loops on a thread of their own (node:worker_threads).
// The process is one event loop otherwise: the API server, every controller
// and the scheduler took turns on one core, and at 30,000 pods on etcd the
// loops' work (decoding watch events, keeping caches, scheduling) held the
// API server's turns back until leases were lost. On their thread they run
// beside it as separate processes would, on the same machine's second core,
// and reach it the same way (its HTTPS port, with the admin kubeconfig).
//
// The thread is told the server's parsed flags and rebuilds them (the flag
// declarations are code, the values plain data); its log lines come back as
// messages. If the thread dies, the server stops: a server without its
// controllers must not look healthy.

import { Worker } from "node:worker_threads";
import type { ControlLoops, ControlLoopsOptions } from "./server-loops.js";

/** What the thread is started with (server-loops-worker.ts reads it). */
export interface ControlLoopsThreadData {
  command: string;
  values: Readonly<Record<string, unknown>>;
  /** The flags the command line named (ParsedFlags.isSet). */
  set: string[];
  kubeconfigPath: string;
}

/** Messages from the thread. */
export type ControlLoopsMessage =
  | { type: "log"; line: string }
  | { type: "started"; ports: { name: string; port: number }[] }
  | { type: "failed"; message: string };

export function startControlLoopsThread(o: ControlLoopsOptions): Promise<ControlLoops> {
  const { flags, context, log } = o;
  const workerData: ControlLoopsThreadData = {
    command: context.command,
    values: flags.values,
    set: flags.list().filter((f) => f.set).map((f) => f.name),
    kubeconfigPath: o.kubeconfigPath,
  };
  const worker = new Worker(new URL("./server-loops-worker.js", import.meta.url), { workerData });
  let stopping = false;
  const stop = () => {
    stopping = true;
    worker.postMessage({ type: "stop" });
  };
  const exited = new Promise<number>((resolve) => worker.once("exit", resolve));
  return new Promise<ControlLoops>((resolve, reject) => {
    let started = false;
    worker.on("message", (m: ControlLoopsMessage) => {
      if (m.type === "log") log(m.line);
      else if (m.type === "started") {
        started = true;
        context.signal.addEventListener("abort", stop, { once: true });
        if (context.signal.aborted) stop();
        resolve({ ports: m.ports, done: exited.then(() => undefined) });
      } else if (started) log(`${context.command}: the control loops failed: ${m.message}`);
      else reject(new Error(m.message));
    });
    worker.on("error", (err) => log(`${context.command}: the control loops' thread failed: ${err.stack ?? err.message}`));
    void exited.then((code) => {
      if (!started) return reject(new Error(`the control loops' thread exited (code ${code}) before it started`));
      if (stopping) return;
      // Nothing runs the controllers or the scheduler any more: stop the whole server (its supervisor restarts it).
      log(`${context.command}: the control loops' thread exited (code ${code}); stopping the server`);
      process.kill(process.pid, "SIGTERM");
    });
  });
}
