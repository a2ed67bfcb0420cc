// The node agent's `POST /checkpoint/{namespace}/{pod}/{container}?timeout=S`
// (seed 001, "Checkpoint a container"): behind gate ContainerCheckpoint, the
// agent names the archive `checkpoint-<pod_full_name>-<container>-<time>.tar`
// under <root-dir>/checkpoints and asks the runtime's CheckpointContainer for
// it. Answers as upstream's kubelet: 404 for an unknown pod or container (and,
// an upstream quirk, for a timeout that is not an integer), 500 with the
// runtime's error when it fails or lacks the call (containerd 1.6 answers
// UNIMPLEMENTED), 200 with `{"items":["<archive path>"]}`. The caller's access
// (nodes/checkpoint) is checked by the component server first.

import { join } from "node:path";
import { podContainers } from "../../api/core/pod-containers.js";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { Request, Response } from "../../component/endpoints.js";
import { isCriError, type CriClient } from "../cri/index.js";

export const CHECKPOINT_PATH = "/checkpoint/";

export interface ContainerCheckpointOptions {
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "checkpointContainer">;
  /** <root-dir>/checkpoints. */
  readonly dir: string;
  /** Gate ContainerCheckpoint. */
  readonly enabled: boolean;
  /** The runtime's default deadline when the request names no timeout (ms). */
  readonly defaultTimeoutMs?: number;
  readonly now?: () => Date;
}

/** grpc-go's code names (`rpc error: code = Unimplemented desc = ...`), from grpc-js's upper-case ones. */
const goCode = (name: string): string => name.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

/** Go's time.RFC3339 in UTC, as the archive name carries it. */
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, "Z");

export class ContainerCheckpoint {
  readonly #o: ContainerCheckpointOptions;

  constructor(options: ContainerCheckpointOptions) {
    this.#o = options;
  }

  async serve(req: Request, res: Response, url: URL): Promise<void> {
    const reply = (status: number, body: string, type = "text/plain; charset=utf-8") => {
      res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
      res.end(body);
    };
    // Gate off: the route does not exist.
    if (!this.#o.enabled) return reply(404, "404 page not found\n");
    let parts: string[];
    try {
      parts = url.pathname.slice(CHECKPOINT_PATH.length).split("/").map(decodeURIComponent);
    } catch {
      return reply(404, "404 page not found\n");
    }
    const [namespace = "", podName = "", container = ""] = parts;
    if (parts.length !== 3 || namespace === "" || podName === "" || container === "") return reply(404, "404 page not found\n");
    if ((req.method ?? "GET").toUpperCase() !== "POST") return reply(405, "405: Method Not Allowed");

    const named = this.#o.pods().filter((p) => p.pod.metadata.namespace === namespace && p.pod.metadata.name === podName);
    const entry = named.find((p) => !p.pod.metadata.deletionTimestamp) ?? named.at(-1);
    if (entry === undefined) return reply(404, "pod does not exist");
    if (!podContainers(entry.pod.spec).some((c) => c.name === container)) return reply(404, `container ${container} does not exist`);
    // Several timeouts: the last one counts.
    const timeouts = url.searchParams.getAll("timeout");
    let timeout = 0;
    if (timeouts.length > 0) {
      const t = timeouts.at(-1)!;
      if (!/^[+-]?\d+$/.test(t) || !Number.isSafeInteger(Number(t))) return reply(404, "cannot parse value of timeout parameter");
      timeout = Number(t);
    }
    const failed = (why: string) => reply(500, `checkpointing of ${namespace}/${podName}/${container} failed (${why})`);

    const status = [...(entry.status.containerStatuses ?? []), ...(entry.status.initContainerStatuses ?? []), ...(entry.status.ephemeralContainerStatuses ?? [])].find((s) => s.name === container);
    const containerId = status?.state?.running && status.containerID ? status.containerID.replace(/^[^:]*:\/\//, "") : "";
    if (containerId === "") return failed(`container ${container} not found`);
    const podFullName = `${podName}_${namespace}`;
    const location = join(this.#o.dir, `checkpoint-${podFullName}-${container}-${rfc3339(this.#o.now?.() ?? new Date())}.tar`);
    try {
      await this.#o.runtime.checkpointContainer({ containerId, location, timeout }, timeout > 0 ? { timeoutMs: timeout * 1000 } : this.#o.defaultTimeoutMs ? { timeoutMs: this.#o.defaultTimeoutMs } : {});
    } catch (err) {
      if (isCriError(err)) return failed(`rpc error: code = ${goCode(err.codeName)} desc = ${err.details}`);
      return failed((err as Error).message);
    }
    reply(200, JSON.stringify({ items: [location] }), "application/json");
  }
}
