// The node agent's `/attach/{namespace}/{pod}/{container}?output=1&error=1&input=1&tty=1`
// on its port (seed 001; upstream kubelet's path): a WebSocket speaking
// channel.k8s.io, or SPDY/3.1 streams (./channel-transport.ts), that carries the running container's output from now on,
// read from its CRI log file as it is written (../logs/log-reader.ts), until
// the container stops (then a Success status) or the client goes away; stdout
// and stderr (one log file) arrive together on the first stream asked for.
// Input (-i) and terminal sizes go to the container through the embedded
// runtime's shim (its attach socket, named in the verbose container status:
// runtime/embedded/shim.ts) when the container was started with stdin or a
// TTY. A runtime offering no such socket (containerd) is asked for CRI
// `Attach`'s streaming URL instead, and the whole session (input, output,
// sizes, status) is carried to its streaming server (./cri-attach-relay.ts).
// A container started without stdin refuses -i with the reason.

import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Pod, PodStatus } from "../../api/core/types.js";
import { GrpcStatus, isCriError, type CriClient } from "../cri/index.js";
import { readLog, type LogSink } from "../logs/log-reader.js";
import { Channel, internalErrorStatus } from "./channel-protocol.js";
import type { ChannelTransport } from "./channel-transport.js";
import { dialStreamingServer, relayAttach, type StreamingSession } from "./cri-attach-relay.js";
import { HIGH_WATER, Refusal, acceptChannels, channelSocketServer, refuse, requireStreamUpgrade, streamTarget, type StreamOptions } from "./stream-request.js";

export const ATTACH_PATH = "/attach/";

export interface ContainerAttachOptions {
  /** The pods the agent runs, with their latest status. */
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "containerStatus" | "attach">;
}

export class ContainerAttach {
  readonly #o: ContainerAttachOptions;
  readonly #wss = channelSocketServer();

  constructor(options: ContainerAttachOptions) {
    this.#o = options;
  }

  /** Answers one upgrade request under ATTACH_PATH. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let containerId: string;
    let logPath: string;
    let channel: Channel.Stdout | Channel.Stderr;
    let options: StreamOptions;
    let input: string | undefined;
    let streaming: StreamingSession | undefined;
    try {
      const target = streamTarget(url, ATTACH_PATH, this.#o.pods());
      containerId = target.containerId;
      options = target.options;
      channel = target.options.stdout ? Channel.Stdout : Channel.Stderr;
      const status = await this.#o.runtime.containerStatus({ containerId, verbose: target.options.stdin || target.options.tty }).catch((err: Error) => {
        throw new Refusal(500, `failed to get container status ${JSON.stringify(containerId)}, ${err.message}`);
      });
      logPath = status.status?.logPath ?? "";
      if (target.options.stdin || target.options.tty) {
        input = attachSocket(status.info?.info);
        const name = decodeURIComponent(url.pathname.slice(ATTACH_PATH.length).split("/")[2] ?? "");
        const spec = [...(target.pod.spec?.containers ?? []), ...(target.pod.spec?.initContainers ?? []), ...(target.pod.spec?.ephemeralContainers ?? [])].find((c) => c.name === name);
        // No ": " in the text: kubectl would read "a: b" as YAML.
        if (target.options.stdin && spec !== undefined && spec.stdin !== true) throw new Refusal(400, `container ${spec.name} was not started with stdin (spec.stdin is false), leave out -i`);
        requireStreamUpgrade(req);
        if (input === undefined) streaming = await this.#streamingSession(containerId, target.options);
      }
      requireStreamUpgrade(req);
    } catch (err) {
      return refuse(socket, err);
    }
    const transport = await acceptChannels(req, socket, head, this.#wss, options, channel).catch((err: unknown) => {
      streaming?.socket.destroy();
      throw err;
    });
    if (transport === undefined) {
      streaming?.socket.destroy();
      return;
    }
    if (streaming !== undefined) return relayAttach(transport, streaming, options);
    const connectInput = input !== undefined ? this.#input(transport, input, options) : undefined;
    void this.#stream(transport, containerId, logPath, channel, connectInput);
  }

  /**
   * The runtime's streaming server (CRI Attach's URL), upgraded to SPDY; a
   * Refusal when the runtime will not or cannot. A runtime without Attach
   * (UNIMPLEMENTED) leaves a terminal-only attach to the log (undefined).
   */
  async #streamingSession(containerId: string, o: StreamOptions): Promise<StreamingSession | undefined> {
    let url: string;
    try {
      ({ url } = await this.#o.runtime.attach({ containerId, stdin: o.stdin, tty: o.tty, stdout: o.stdout, stderr: o.stderr && !o.tty }));
    } catch (err) {
      if (isCriError(err, GrpcStatus.UNIMPLEMENTED)) {
        if (!o.stdin) return undefined;
        throw new Refusal(400, "this runtime offers no way to a container's stdin (neither an attach socket nor CRI Attach), leave out -i");
      }
      // No ": " in the text: kubectl would read "a: b" as YAML.
      const why = (err as { details?: string }).details ?? (err as Error).message;
      throw new Refusal(500, `unable to attach to container ${containerId} through the runtime (${why.replace(/: /g, " - ")})`);
    }
    try {
      return await dialStreamingServer(url);
    } catch (err) {
      throw new Refusal(500, (err as Error).message.replace(/: /g, " - "));
    }
  }

  close(): void {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }

  /**
   * Relays the client's input and terminal sizes to the shim's attach socket,
   * in its frames (shim.ts). Returns the connect step: the caller connects once
   * the output is followed, so the answer to the first input is not missed;
   * frames wait until then.
   */
  #input(t: ChannelTransport, path: string, o: StreamOptions): () => void {
    let socket: Socket | undefined;
    let closed = false;
    const queued: Buffer[] = [];
    const frame = (type: number, payload: Buffer): void => {
      const head = Buffer.alloc(5);
      head.writeUInt8(type, 0);
      head.writeUInt32BE(payload.length, 1);
      const data = Buffer.concat([head, payload]);
      if (socket === undefined) queued.push(data);
      else if (!socket.destroyed && socket.writable) socket.write(data);
    };
    if (o.stdin) t.on("stdin", (data) => frame(0, data));
    if (o.stdin) t.on("stdinEnd", () => frame(2, Buffer.alloc(0)));
    if (o.tty) {
      t.on("resize", (size) => {
        const p = Buffer.alloc(4);
        p.writeUInt16BE(Math.min(size.width, 0xffff), 0);
        p.writeUInt16BE(Math.min(size.height, 0xffff), 2);
        frame(1, p);
      });
    }
    t.on("close", () => {
      closed = true;
      socket?.end();
    });
    return () => {
      if (socket !== undefined || closed) return;
      socket = connect(path);
      socket.on("error", () => {});
      // The container's output comes from its log: nothing is read here.
      socket.resume();
      for (const data of queued.splice(0)) socket.write(data);
    };
  }

  async #stream(t: ChannelTransport, containerId: string, logPath: string, channel: Channel.Stdout | Channel.Stderr, following?: () => void): Promise<void> {
    const gone = new AbortController();
    t.on("close", () => gone.abort());
    let drained: (() => void) | undefined;
    const sink: LogSink = {
      write(chunk) {
        t.send(channel, chunk, () => {
          if (t.buffered < HIGH_WATER && drained !== undefined) {
            const f = drained;
            drained = undefined;
            f();
          }
        });
        return t.buffered < HIGH_WATER;
      },
      once(_event, listener) {
        drained = listener;
      },
    };
    gone.signal.addEventListener("abort", () => drained?.(), { once: true });
    try {
      await readLog(logPath, { follow: true, tailLines: 0 }, sink, {
        signal: gone.signal,
        ...(following !== undefined ? { onFollowing: following } : {}),
        stillRunning: async () => {
          try {
            return (await this.#o.runtime.containerStatus({ containerId })).status?.state === "CONTAINER_RUNNING";
          } catch {
            return false;
          }
        },
      });
      t.end({ metadata: {}, status: "Success" });
    } catch (err) {
      t.end(internalErrorStatus(`error attaching to container: ${(err as Error).message}`));
    }
  }
}

/** The shim's attach socket from a verbose container status's info (the embedded runtime's), if it names one. */
function attachSocket(info: string | undefined): string | undefined {
  if (info === undefined) return undefined;
  try {
    const socket = (JSON.parse(info) as { attach?: { socket?: unknown } }).attach?.socket;
    return typeof socket === "string" ? socket : undefined;
  } catch {
    return undefined;
  }
}
