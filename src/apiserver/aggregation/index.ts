// The aggregation layer in the API server (./aggregator.ts): local
// APIServices, availability checks, and the proxy to extension API servers.

import type { Naming } from "../../machinery/naming.js";
import type { ApiRegistry } from "../api-registry.js";
import type { Stores } from "../storage-factory.js";
import { Aggregator } from "./aggregator.js";

export { Aggregator, type AggregatorOptions } from "./aggregator.js";

/** Starts the aggregation layer when APIServices are served (their group module is in the server's modules). */
export async function startAggregation(o: {
  registry: ApiRegistry;
  stores: Stores;
  naming: Naming;
  log: (line: string) => void;
  proxyClient: { cert: string; key: string };
  documents: readonly { invalidate(): void }[];
  checkIntervalMs?: number;
}): Promise<Aggregator | undefined> {
  const store = o.stores.for({ group: o.naming.apiregistrationGroup, resource: "apiservices" });
  if (store === undefined) return undefined;
  const aggregator = new Aggregator(o, store);
  await aggregator.start();
  return aggregator;
}
