// The node agent's `GET /containerLogs/{namespace}/{pod}/{container}`: what
// the API server's pods/log streams from. Finds the container instance from
// the pod's status as the agent last computed it (the running or last
// instance, or with `previous` the last terminated one), asks the runtime for
// its log path and streams it (./log-reader.ts). Errors are upstream's
// kubelet's: plain text, 400 for a container with no log to show, 404 for a
// pod or container the node does not have. Callers check access first.

import { podContainers, podContainerStatuses } from "../../api/core/pod-containers.js";
import { access } from "node:fs/promises";
import type { Pod, PodStatus } from "../../api/core/types.js";
import { LogOptionsError, parsePodLogOptions, validatePodLogOptions } from "../../api/core/pod-log-options.js";
import type { Request, Response } from "../../component/endpoints.js";
import type { CriClient } from "../cri/index.js";
import { readLog, type LogSink } from "./log-reader.js";

export const CONTAINER_LOGS_PATH = "/containerLogs/";

export interface ContainerLogsOptions {
  /** The pods the agent runs, with their latest status. */
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "containerStatus">;
  /** How long a follow waits for output before asking whether the container still runs (default 1 s). */
  readonly idleCheckMs?: number;
}

/** An answer other than the log: upstream's status and plain-text message. */
class LogsError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const q = JSON.stringify;

/** Upstream's validateContainerLogStatus: which container instance's log to read. */
export function containerIdForLogs(status: PodStatus, podName: string, container: string, previous: boolean): string {
  const s = podContainerStatuses(status).find((c) => c.name === container);
  if (s === undefined) throw new LogsError(400, `container ${q(container)} in pod ${q(podName)} is not available`);
  const last = s.lastState?.terminated;
  const { waiting, running, terminated } = s.state ?? {};
  if (previous) {
    if (!last?.containerID) throw new LogsError(400, `previous terminated container ${q(container)} in pod ${q(podName)} not found`);
    return last.containerID;
  }
  if (running && s.containerID) return s.containerID;
  if (terminated) {
    if (terminated.containerID) return terminated.containerID;
    if (last?.containerID) return last.containerID;
    throw new LogsError(400, `container ${q(container)} in pod ${q(podName)} is terminated`);
  }
  if (last) {
    if (last.containerID) return last.containerID;
    throw new LogsError(400, `container ${q(container)} in pod ${q(podName)} is terminated`);
  }
  if (waiting) {
    const reason = waiting.reason ?? "";
    const why = reason === "ErrImagePull" ? "image can't be pulled" : reason === "ImagePullBackOff" ? "trying and failing to pull image" : reason;
    throw new LogsError(400, `container ${q(container)} in pod ${q(podName)} is waiting to start: ${why}`);
  }
  throw new LogsError(400, `container ${q(container)} in pod ${q(podName)} is waiting to start - no logs yet`);
}

export class ContainerLogs {
  readonly #o: ContainerLogsOptions;

  constructor(options: ContainerLogsOptions) {
    this.#o = options;
  }

  /** Answers one request under CONTAINER_LOGS_PATH. */
  async serve(_req: Request, res: Response, url: URL): Promise<void> {
    try {
      await this.#serve(res, url);
    } catch (err) {
      if (!(err instanceof LogsError)) throw err;
      if (res.headersSent) return void res.end();
      res.writeHead(err.status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(err.message) });
      res.end(err.message);
    }
  }

  async #serve(res: Response, url: URL): Promise<void> {
    let parts: string[];
    try {
      parts = url.pathname.slice(CONTAINER_LOGS_PATH.length).split("/").map(decodeURIComponent);
    } catch {
      throw new LogsError(400, `{"message": "Malformed path."}`);
    }
    const [namespace = "", podName = "", container = ""] = parts;
    if (podName === "") throw new LogsError(400, `{"message": "Missing podID."}`);
    if (container === "") throw new LogsError(400, `{"message": "Missing container name."}`);
    if (namespace === "") throw new LogsError(400, `{"message": "Missing podNamespace."}`);
    let opts;
    try {
      opts = parsePodLogOptions(url.searchParams);
    } catch (err) {
      if (err instanceof LogOptionsError) throw new LogsError(400, `{"message": "Unable to decode query."}`);
      throw err;
    }
    if (validatePodLogOptions(opts).length > 0) throw new LogsError(422, `{"message": "Invalid request."}`);

    // A pod deleted and created again under its name may still be stopping here: the live one wins.
    const named = this.#o.pods().filter((p) => p.pod.metadata.namespace === namespace && p.pod.metadata.name === podName);
    const entry = named.find((p) => !p.pod.metadata.deletionTimestamp) ?? named.at(-1);
    if (entry === undefined) throw new LogsError(404, `pod ${q(podName)} does not exist`);
    const spec = entry.pod.spec;
    if (!podContainers(spec).some((c) => c.name === container)) {
      throw new LogsError(404, `container ${q(container)} not found in pod ${q(podName)}`);
    }
    const id = containerIdForLogs(entry.status, podName, container, opts.previous).replace(/^[^:]*:\/\//, "");
    let logPath: string;
    try {
      logPath = (await this.#o.runtime.containerStatus({ containerId: id })).status?.logPath ?? "";
      await access(logPath);
    } catch (err) {
      throw new LogsError(400, `failed to get container status ${q(id)}: ${(err as Error).message}`);
    }

    const since = opts.sinceSeconds !== undefined ? Date.now() - opts.sinceSeconds * 1000 : opts.sinceTime;
    // HTTP/1.1 streams chunked by itself; HTTP/2 must not carry Transfer-Encoding.
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    await readLog(
      logPath,
      {
        follow: opts.follow,
        timestamps: opts.timestamps,
        ...(opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {}),
        ...(opts.limitBytes !== undefined ? { limitBytes: opts.limitBytes } : {}),
        ...(since !== undefined ? { sinceMs: since } : {}),
      },
      res as unknown as LogSink,
      {
        signal: gone.signal,
        stillRunning: async () => {
          try {
            return (await this.#o.runtime.containerStatus({ containerId: id })).status?.state === "CONTAINER_RUNNING";
          } catch {
            return false;
          }
        },
        ...(this.#o.idleCheckMs !== undefined ? { idleCheckMs: this.#o.idleCheckMs } : {}),
      },
    ).catch(() => {});
    res.end();
  }
}
