// The node agent's `/attach/{namespace}/{pod}/{container}?output=1&error=1`
// on its port (seed 001; upstream kubelet's path): a WebSocket speaking
// channel.k8s.io that carries the running container's output from now on,
// read from its CRI log file as it is written (../logs/log-reader.ts), until
// the container stops (then a Success status) or the client goes away.
// Output only: the embedded runtime starts every container without a stdin,
// and on containerd reaching it would take CRI Attach's streaming server, which
// the agent does not use; so stdin is refused with the reason, and stdout and
// stderr (one log file) arrive together on the first stream asked for.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import { readLog, type LogSink } from "../logs/log-reader.js";
import { Channel, endStream, frame, internalErrorStatus, type ChannelProtocol } from "./channel-protocol.js";
import { HIGH_WATER, Refusal, channelSocketServer, refuse, requireWebSocket, streamTarget } from "./stream-request.js";

export const ATTACH_PATH = "/attach/";

export interface ContainerAttachOptions {
  /** The pods the agent runs, with their latest status. */
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "containerStatus">;
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
    let channel: Channel;
    try {
      const target = streamTarget(url, ATTACH_PATH, this.#o.pods());
      // No ": " in the text: kubectl would read "a: b" as YAML.
      if (target.options.stdin) throw new Refusal(400, "orch attaches to a container's output only (its stdin is not reachable), leave out -i");
      containerId = target.containerId;
      channel = target.options.stdout ? Channel.Stdout : Channel.Stderr;
      logPath = (await this.#o.runtime.containerStatus({ containerId }).catch((err: Error) => {
        throw new Refusal(500, `failed to get container status ${JSON.stringify(containerId)}, ${err.message}`);
      })).status?.logPath ?? "";
      requireWebSocket(req);
    } catch (err) {
      return refuse(socket, err);
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => void this.#stream(ws, ws.protocol as ChannelProtocol | "", containerId, logPath, channel));
  }

  close(): void {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }

  async #stream(ws: WebSocket, protocol: ChannelProtocol | "", containerId: string, logPath: string, channel: Channel): Promise<void> {
    ws.send(frame(channel));
    const gone = new AbortController();
    ws.on("close", () => gone.abort());
    ws.on("error", () => {});
    let drained: (() => void) | undefined;
    const sink: LogSink = {
      write(chunk) {
        ws.send(frame(channel, chunk), () => {
          if (ws.bufferedAmount < HIGH_WATER && drained !== undefined) {
            const f = drained;
            drained = undefined;
            f();
          }
        });
        return ws.bufferedAmount < HIGH_WATER;
      },
      once(_event, listener) {
        drained = listener;
      },
    };
    gone.signal.addEventListener("abort", () => drained?.(), { once: true });
    try {
      await readLog(logPath, { follow: true, tailLines: 0 }, sink, {
        signal: gone.signal,
        stillRunning: async () => {
          try {
            return (await this.#o.runtime.containerStatus({ containerId })).status?.state === "CONTAINER_RUNNING";
          } catch {
            return false;
          }
        },
      });
      endStream(ws, protocol, { metadata: {}, status: "Success" });
    } catch (err) {
      endStream(ws, protocol, internalErrorStatus(`error attaching to container: ${(err as Error).message}`));
    }
  }
}
