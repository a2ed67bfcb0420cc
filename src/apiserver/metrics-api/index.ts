// The resource metrics API (metrics.k8s.io) served by the API server itself:
// the scrape loop over the Ready nodes' agents and the read-only handler.

import type { Encoding } from "../http/respond.js";
import type { NodeAgentClient } from "../node-agents.js";
import type { Stores } from "../storage-factory.js";
import { MetricsApi } from "./handler.js";
import { ResourceScraper } from "./scrape.js";

export { MetricsApi } from "./handler.js";
export { ResourceScraper, parseExposition, mergeScrape, usageOf } from "./scrape.js";

/** Starts scraping when the server has nodes and pods (and the metrics group is served); undefined otherwise. */
export function startMetricsApi(o: { stores: Stores; agents: NodeAgentClient; encoding: Encoding; resolutionMs: number; log: (line: string) => void }): { api: MetricsApi; stop(): Promise<void> } | undefined {
  const nodes = o.stores.nodes;
  const pods = o.stores.for({ group: "", resource: "pods" });
  if (nodes === undefined || pods === undefined) return undefined;
  const scraper = new ResourceScraper({
    agents: o.agents,
    nodes: async () => (await nodes.list(undefined, {})).items.map((c) => c.object),
    resolutionMs: o.resolutionMs,
    log: o.log,
  });
  scraper.start();
  return { api: new MetricsApi({ scraper, nodes, pods, encoding: o.encoding }), stop: () => scraper.stop() };
}
