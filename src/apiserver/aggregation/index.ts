// The aggregation layer in the API server (./aggregator.ts): local
// APIServices, availability checks, and the proxy to extension API servers.

import type { Naming } from "../../machinery/naming.js";
import type { ApiRegistry } from "../api-registry.js";
import type { Stores } from "../storage-factory.js";
import { Aggregator } from "./aggregator.js";

export { Aggregator, type AggregatorOptions } from "./aggregator.js";

/**
 * The aggregation layer when APIServices are served (their group module is in
 * the server's modules). Made before custom resources are served (the groups
 * served then are the built-in ones), started once they are (so a restart
 * does not drop and remake their APIServices).
 */
export function aggregation(o: {
  registry: ApiRegistry;
  stores: Stores;
  naming: Naming;
  log: (line: string) => void;
  proxyClient: { cert: string; key: string };
  documents: readonly { invalidate(): void }[];
  checkIntervalMs?: number;
}): Aggregator | undefined {
  const store = o.stores.for({ group: o.naming.apiregistrationGroup, resource: "apiservices" });
  return store === undefined ? undefined : new Aggregator(o, store);
}
