// The node agent's `/attach/{namespace}/{pod}/{container}?output=1&error=1`
// on its port (seed 001; upstream kubelet's path): a WebSocket speaking
// channel.k8s.io, or SPDY/3.1 streams (./channel-transport.ts), that carries the running container's output from now on,
// read from its CRI log file as it is written (../logs/log-reader.ts), until
// the container stops (then a Success status) or the client goes away.
// Output only: the embedded runtime starts every container without a stdin,
// and on containerd reaching it would take CRI Attach's streaming server, which
// the agent does not use; so stdin is refused with the reason, and stdout and
// stderr (one log file) arrive together on the first stream asked for.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import { readLog, type LogSink } from "../logs/log-reader.js";
import { Channel, internalErrorStatus } from "./channel-protocol.js";
import type { ChannelTransport } from "./channel-transport.js";
import { HIGH_WATER, Refusal, acceptChannels, channelSocketServer, refuse, requireStreamUpgrade, streamTarget, type StreamOptions } from "./stream-request.js";

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
    let channel: Channel.Stdout | Channel.Stderr;
    let options: StreamOptions;
    try {
      const target = streamTarget(url, ATTACH_PATH, this.#o.pods());
      // No ": " in the text: kubectl would read "a: b" as YAML.
      if (target.options.stdin) throw new Refusal(400, "orch attaches to a container's output only (its stdin is not reachable), leave out -i");
      containerId = target.containerId;
      options = target.options;
      channel = target.options.stdout ? Channel.Stdout : Channel.Stderr;
      logPath = (await this.#o.runtime.containerStatus({ containerId }).catch((err: Error) => {
        throw new Refusal(500, `failed to get container status ${JSON.stringify(containerId)}, ${err.message}`);
      })).status?.logPath ?? "";
      requireStreamUpgrade(req);
    } catch (err) {
      return refuse(socket, err);
    }
    const transport = await acceptChannels(req, socket, head, this.#wss, options, channel);
    if (transport !== undefined) void this.#stream(transport, containerId, logPath, channel);
  }

  close(): void {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }

  async #stream(t: ChannelTransport, containerId: string, logPath: string, channel: Channel.Stdout | Channel.Stderr): Promise<void> {
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
