// TCP connections to 127.0.0.1:PORT inside a pod's network namespace, for
// port-forward (./port-forward.ts), as upstream's runtimes make them
// (containerd dials `localhost:PORT` in the sandbox's namespace). Node cannot
// enter a namespace, so one helper process per namespace
// (`nsenter --net=NSPATH node netns-dial-helper.js`) makes the connections
// and passes each connected socket back over its IPC channel: the agent then
// holds the pod's connection itself (no relay, the kernel's backpressure and
// half-close). The helper starts with the first connection to its namespace
// and exits after `idleMs` without one (or when the agent closes), so it
// keeps no namespace alive for long after its pod has gone.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { LoopbackFailure } from "./loopback-dial.js";

const HELPER = fileURLToPath(new URL("./netns-dial-helper.js", import.meta.url));
const NSENTER = ["/usr/bin/nsenter", "/bin/nsenter", "/usr/sbin/nsenter"].find(existsSync) ?? "nsenter";

/** A failed dial: `failure` when nothing listened (both attempts' errors), otherwise why the namespace could not be used. */
export class NetnsDialError extends Error {
  constructor(message: string, readonly failure?: LoopbackFailure) {
    super(message);
  }
}

interface Pending {
  resolve(socket: Socket): void;
  reject(err: NetnsDialError): void;
  timer: NodeJS.Timeout;
}

interface Helper {
  readonly child: ChildProcess;
  readonly pending: Map<number, Pending>;
  stderr: string;
  idle?: NodeJS.Timeout;
}

export interface NetnsDialerOptions {
  /** How long a helper stays without a dial (default 10 s). */
  readonly idleMs?: number;
  /** A dial's deadline (default 10 s). */
  readonly timeoutMs?: number;
}

export class NetnsDialer {
  readonly #helpers = new Map<string, Helper>();
  readonly #idleMs: number;
  readonly #timeoutMs: number;
  #next = 0;
  #closed = false;

  constructor(options: NetnsDialerOptions = {}) {
    this.#idleMs = options.idleMs ?? 10_000;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Helpers running now (one per namespace in use). */
  get helpers(): number {
    return this.#helpers.size;
  }

  /** Connects to 127.0.0.1:`port` inside the network namespace at `netns` (a /run/netns/… or /proc/PID/ns/net path). */
  dial(netns: string, port: number): Promise<Socket> {
    if (this.#closed) return Promise.reject(new NetnsDialError("the node agent is stopping"));
    const helper = this.#helper(netns);
    clearTimeout(helper.idle);
    const id = ++this.#next;
    return new Promise<Socket>((resolve, reject) => {
      const timer = setTimeout(() => {
        helper.pending.delete(id);
        reject(new NetnsDialError("i/o timeout"));
        this.#idleLater(netns, helper);
      }, this.#timeoutMs);
      helper.pending.set(id, { resolve, reject, timer });
      // A failed send means the helper is exiting: its exit fails the dial, with nsenter's reason.
      helper.child.send({ id, port }, () => {});
    });
  }

  /** Starts the helper for `netns` ahead of the first dial (a port-forward session has begun); it idles out as usual. */
  warm(netns: string): void {
    if (this.#closed || this.#helpers.has(netns)) return;
    this.#idleLater(netns, this.#helper(netns));
  }

  /** Stops every helper; dials in flight fail. */
  close(): void {
    this.#closed = true;
    for (const [netns, h] of this.#helpers) this.#drop(netns, h, "the node agent is stopping");
  }

  #helper(netns: string): Helper {
    const known = this.#helpers.get(netns);
    if (known !== undefined) return known;
    const child = spawn(NSENTER, [`--net=${netns}`, "--", process.execPath, HELPER], { stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "json" });
    const helper: Helper = { child, pending: new Map(), stderr: "" };
    this.#helpers.set(netns, helper);
    child.stderr!.on("data", (d: Buffer) => {
      if (helper.stderr.length < 4096) helper.stderr += d.toString("utf8");
    });
    child.on("message", (msg: { id: number; error?: LoopbackFailure }, handle: unknown) => {
      const socket = handle as Socket | undefined;
      const entry = helper.pending.get(msg.id);
      if (entry === undefined) {
        socket?.destroy();
        return;
      }
      if (msg.error !== undefined || socket === undefined) return this.#settle(netns, helper, msg.id, new NetnsDialError("nothing listens", msg.error));
      helper.pending.delete(msg.id);
      clearTimeout(entry.timer);
      // A received socket is made half-open-less by Node; the pod's FIN must not end our writing half.
      (socket as { allowHalfOpen: boolean }).allowHalfOpen = true;
      entry.resolve(socket);
      this.#idleLater(netns, helper);
    });
    child.once("error", (err) => this.#drop(netns, helper, err.message));
    // After its stderr is read: nsenter's last line says why it could not enter.
    child.once("close", (code, signal) => {
      const why = helper.stderr.trim().split("\n").filter((l) => l !== "").pop() ?? `exited with ${signal ?? `status ${code}`}`;
      this.#drop(netns, helper, why);
    });
    // The agent may exit with a helper idling.
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
    return helper;
  }

  #settle(netns: string, helper: Helper, id: number, err: NetnsDialError): void {
    const entry = helper.pending.get(id);
    if (entry === undefined) return;
    helper.pending.delete(id);
    clearTimeout(entry.timer);
    entry.reject(err);
    this.#idleLater(netns, helper);
  }

  #idleLater(netns: string, helper: Helper): void {
    if (helper.pending.size > 0 || this.#helpers.get(netns) !== helper) return;
    clearTimeout(helper.idle);
    helper.idle = setTimeout(() => this.#drop(netns, helper, "idle"), this.#idleMs);
    helper.idle.unref();
  }

  #drop(netns: string, helper: Helper, why: string): void {
    if (this.#helpers.get(netns) === helper) this.#helpers.delete(netns);
    clearTimeout(helper.idle);
    for (const [id, entry] of helper.pending) {
      helper.pending.delete(id);
      clearTimeout(entry.timer);
      entry.reject(new NetnsDialError(why));
    }
    if (helper.child.exitCode === null && helper.child.signalCode === null) helper.child.kill("SIGKILL");
  }
}
