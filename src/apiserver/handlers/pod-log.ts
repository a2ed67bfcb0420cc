// GET /api/v1/namespaces/NS/pods/NAME/log (seed 000, "Endpoints": sub-resources
// for log retrieval): checks the PodLogOptions (400 for a parameter that does not
// decode, 422 for one out of range), picks the container (required when the pod
// has several, with upstream's message), finds the pod's node and streams its
// agent's /containerLogs back as text/plain, flushing as lines arrive, until the
// agent ends or the client goes away. A pod not yet on a node has no log: 204,
// as upstream. The agent's refusals become Status errors as upstream's
// LocationStreamer makes them (its 400 text is the message kubectl prints).

import type { IncomingMessage } from "node:http";
import { podContainers } from "../../api/core/pod-containers.js";
import type { Node, Pod } from "../../api/core/types.js";
import { LogOptionsError, parsePodLogOptions, podLogQuery, validatePodLogOptions } from "../../api/core/pod-log-options.js";
import { ApiError, badRequest, buildStatus, invalid } from "../../machinery/index.js";
import { writeOrWait, type ChunkSink } from "../../machinery/until.js";
import { agentBaseUrl } from "../node-agents.js";
import type { SubresourceRequest } from "./request.js";

/** How much of an agent's error body becomes the message. */
const MAX_ERROR_BODY = 64 * 1024;

/** Upstream's validateContainer: the container named, or the only one; otherwise a 400 naming the choices. */
export function logContainer(pod: Pod, container: string | undefined): string {
  const spec = pod.spec;
  const name = pod.metadata.name ?? "";
  const all = podContainers(spec);
  if (container === undefined) {
    const containers = spec?.containers ?? [];
    if (containers.length === 1) return containers[0]!.name ?? "";
    if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.map((c) => c.name).join(" ")}]`);
  }
  if (!all.some((c) => c.name === container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** An agent's non-200 answer as upstream's GenericHttpResponseChecker turns it into a Status. */
function agentError(status: number, body: string, name: string): ApiError {
  const suffix = ` ( pods/log ${name})`;
  switch (status) {
    case 400:
      return badRequest(body);
    case 404:
      return new ApiError(buildStatus({ code: 404, reason: "NotFound", message: `the server could not find the requested resource${suffix}`, details: { name, kind: "pods/log" } }));
    case 401:
      return new ApiError(buildStatus({ code: 401, reason: "Unauthorized", message: `the server has asked for the client to provide credentials${suffix}`, details: { name, kind: "pods/log" } }));
    case 403:
      return new ApiError(buildStatus({ code: 403, reason: "Forbidden", message: body, details: { name, kind: "pods/log" } }));
    case 500:
      return new ApiError(buildStatus({ code: 500, reason: "InternalError", message: `Internal error occurred: ${body}`, details: { causes: [{ message: body }] } }));
    default:
      return new ApiError(buildStatus({ code: status, reason: "", message: `the server responded with the status code ${status} but did not return more information${suffix}`, details: { name, kind: "pods/log" } }));
  }
}

/** What opening a pod's log needs: the pods' and nodes' stores and the agents' client (a GET or a WebSocket upgrade). */
export type PodLogSource = Pick<SubresourceRequest, "store" | "nodes" | "agents" | "query" | "name" | "path">;

/**
 * Checks the options, finds the pod's agent and opens its /containerLogs:
 * the agent's 200 answer to stream, or undefined when the pod is on no node
 * yet (no log). Refusals throw upstream's Status errors.
 */
export async function openPodLog(r: PodLogSource, signal: AbortSignal): Promise<IncomingMessage | undefined> {
  const name = r.name;
  let opts;
  try {
    opts = parsePodLogOptions(r.query);
  } catch (err) {
    if (err instanceof LogOptionsError) throw badRequest(err.message);
    throw err;
  }
  const errs = validatePodLogOptions(opts);
  if (errs.length > 0) throw invalid({ group: "", kind: "PodLogOptions" }, name, errs);

  const pod = (await r.store.get(r.path.namespace, name)).object as Pod;
  const container = logContainer(pod, opts.container);
  const nodeName = pod.spec?.nodeName ?? "";
  if (nodeName === "" || r.nodes === undefined) return undefined;
  const node = (await r.nodes.get(undefined, nodeName)).object as Node;
  const url = `${agentBaseUrl(node)}/containerLogs/${encodeURIComponent(pod.metadata.namespace ?? "")}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`;
  const query = podLogQuery(opts).toString();
  const target = query === "" ? url : `${url}?${query}`;
  let upstream;
  try {
    upstream = await r.agents.get(target, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new ApiError(buildStatus({ code: 500, reason: "", message: `Get ${JSON.stringify(target)}: ${(err as Error).message}` }));
  }
  if (upstream.statusCode !== 200) {
    let body = "";
    upstream.setEncoding("utf8");
    for await (const chunk of upstream) {
      if (body.length < MAX_ERROR_BODY) body += chunk as string;
    }
    throw agentError(upstream.statusCode ?? 500, body.slice(0, MAX_ERROR_BODY), name);
  }
  return upstream;
}

/** GET, routed by the pods/log declaration (src/api/subresources/log.ts). */
export async function handlePodLog(r: SubresourceRequest): Promise<void> {
  // The client leaving ends the agent's request too (a follow would otherwise run on).
  const gone = new AbortController();
  r.res.once("close", () => gone.abort());
  let upstream;
  try {
    upstream = await openPodLog(r, gone.signal);
  } catch (err) {
    if (gone.signal.aborted) return;
    throw err;
  }
  if (upstream === undefined) {
    r.res.writeHead(204);
    return void r.res.end();
  }
  // No Content-Length: HTTP/1.1 answers chunked, HTTP/2 in DATA frames; each write leaves at once.
  r.res.writeHead(200, { "content-type": "text/plain" });
  const res = r.res as ChunkSink & { end(): void };
  try {
    for await (const chunk of upstream) {
      await writeOrWait(res, chunk as Buffer, gone.signal);
      if (gone.signal.aborted) break;
    }
  } catch {
    // The agent went away mid-stream: end what was sent, as upstream's copy does.
  }
  upstream.destroy();
  res.end();
}
