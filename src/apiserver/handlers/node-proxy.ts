// GET /api/v1/nodes/NAME/proxy/PATH: the node agent's answer to GET /PATH
// (with the query), status, content type and body as the agent gives them,
// fetched with the API server's node-agent client certificate (the agent
// authorizes that user for nodes/proxy, nodes/stats, nodes/metrics). This is
// how `/api/v1/nodes/NAME/proxy/stats/summary` and `/metrics/resource` are
// read through the API server. An agent that cannot be reached is a 503, in
// upstream's words.

import type { Node } from "../../api/core/types.js";
import { serviceUnavailable } from "../../machinery/index.js";
import { writeOrWait, type ChunkSink } from "../../machinery/until.js";
import { agentBaseUrl } from "../node-agents.js";
import type { SubresourceRequest } from "./request.js";

const HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer"]);

export async function handleNodeProxy(r: SubresourceRequest): Promise<void> {
  const node = (await r.store.get(undefined, r.name)).object as Node;
  const query = r.query.toString();
  const target = `${agentBaseUrl(node)}/${(r.path.proxyPath ?? "").split("/").map(encodeURIComponent).join("/")}${query === "" ? "" : `?${query}`}`;
  const gone = new AbortController();
  r.res.once("close", () => gone.abort());
  let upstream;
  try {
    upstream = await r.agents.get(target, gone.signal);
  } catch (err) {
    if (gone.signal.aborted) return;
    throw serviceUnavailable(`error trying to reach service: ${(err as Error).message}`);
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(upstream.headers)) if (typeof v === "string" && !HOP_HEADERS.has(k)) headers[k] = v;
  r.res.writeHead(upstream.statusCode ?? 502, headers);
  const res = r.res as ChunkSink & { end(): void };
  try {
    for await (const chunk of upstream) {
      await writeOrWait(res, chunk as Buffer, gone.signal);
      if (gone.signal.aborted) break;
    }
  } catch {
    // The agent went away mid-answer: end what was sent.
  }
  upstream.destroy();
  res.end();
}
