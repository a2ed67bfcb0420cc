// The node agent's `/exec/{namespace}/{pod}/{container}?command=..&input=1&output=1&error=1&tty=1` on its port (seed 001)
// (upstream kubelet's path and parameters): a WebSocket upgrade speaking
// channel.k8s.io (./channel-protocol.ts) to the command run in the container
// (./exec-command.ts), or the same channels as SPDY/3.1 streams
// (./channel-transport.ts). Refusals are upstream's: plain text, 404 `pod does
// not exist`, 500 `container not found ("c")` for a container that is not
// running. Callers check access first.

import { spawn, type ChildProcess } from "node:child_process";
import type { IncomingMessage } from "node:http";
import { constants } from "node:os";
import type { Duplex } from "node:stream";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import { Channel, exitStatus, internalErrorStatus } from "./channel-protocol.js";
import type { ChannelTransport } from "./channel-transport.js";
import { ExecSetupError, execCommand, parseExecInfo, type ExecCommand } from "./exec-command.js";
import { killTree } from "./process-tree.js";
import { HIGH_WATER, Refusal, acceptChannels, channelSocketServer, refuse, requireStreamUpgrade, streamTarget, type StreamOptions } from "./stream-request.js";
import { resizeTerminal } from "./terminal-size.js";

export const EXEC_PATH = "/exec/";

export interface ContainerExecOptions {
  /** The pods the agent runs, with their latest status. */
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "containerStatus">;
  readonly log?: (line: string) => void;
}


export class ContainerExec {
  readonly #o: ContainerExecOptions;
  readonly #wss = channelSocketServer();
  readonly #children = new Set<ChildProcess>();

  constructor(options: ContainerExecOptions) {
    this.#o = options;
  }

  /** Answers one upgrade request under EXEC_PATH. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let command: ExecCommand;
    let options: StreamOptions;
    try {
      ({ command, options } = await this.#prepare(req, url));
    } catch (err) {
      return refuse(socket, err);
    }
    const first = options.stdout ? Channel.Stdout : options.stderr ? Channel.Stderr : Channel.Error;
    const transport = await acceptChannels(req, socket, head, this.#wss, options, first);
    if (transport !== undefined) this.#run(transport, command, options);
  }

  /** Kills the commands still running (the agent stops). */
  close(): void {
    for (const c of this.#children) if (c.pid !== undefined) void killTree(c.pid);
    this.#wss.close();
  }

  async #prepare(req: IncomingMessage, url: URL): Promise<{ command: ExecCommand; options: StreamOptions }> {
    const { containerId: id, options } = streamTarget(url, EXEC_PATH, this.#o.pods());
    let command: ExecCommand;
    try {
      const info = parseExecInfo((await this.#o.runtime.containerStatus({ containerId: id, verbose: true })).info);
      command = execCommand(info, options.command, options.tty);
    } catch (err) {
      if (err instanceof ExecSetupError) throw new Refusal(400, err.message);
      throw new Refusal(500, `failed to get container status ${JSON.stringify(id)}: ${(err as Error).message}`);
    }
    requireStreamUpgrade(req);
    return { command, options };
  }

  #run(t: ChannelTransport, command: ExecCommand, o: StreamOptions): void {
    const child = spawn(command.file, command.args, {
      stdio: [o.stdin || o.tty ? "pipe" : "ignore", o.stdout ? "pipe" : "ignore", o.stderr ? "pipe" : "ignore"],
      env: command.env,
      ...(command.cwd !== undefined ? { cwd: command.cwd } : {}),
    });
    this.#children.add(child);

    // Backpressure: pause the command's output while the client has not taken what was sent.
    const outputs = [child.stdout, child.stderr].filter((s) => s !== null);
    const forward = (channel: Channel.Stdout | Channel.Stderr) => (chunk: Buffer) => {
      t.send(channel, chunk, () => {
        if (t.buffered < HIGH_WATER) for (const s of outputs) s.resume();
      });
      if (t.buffered >= HIGH_WATER) for (const s of outputs) s.pause();
    };
    child.stdout?.on("data", forward(Channel.Stdout));
    child.stderr?.on("data", forward(Channel.Stderr));
    child.stdin?.on("error", () => {}); // the command may exit before reading all input

    t.on("stdin", (data) => {
      if (o.stdin) child.stdin?.write(data);
    });
    t.on("stdinEnd", () => child.stdin?.end());
    t.on("resize", (size) => {
      if (o.tty && child.pid !== undefined) void resizeTerminal(child.pid, size);
    });
    // The client went away: the command goes too, as upstream's runtimes end an exec whose stream closed.
    t.on("close", () => {
      child.stdin?.end();
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) void killTree(child.pid);
    });

    const finish = (status: object) => {
      this.#children.delete(child);
      t.end(status);
    };
    child.once("error", (err) => finish(internalErrorStatus(`error executing command in container: ${err.message}`)));
    child.once("close", (code, signal) => {
      finish(exitStatus(code ?? 128 + (signal !== null ? constants.signals[signal] : 0)));
    });
  }
}
