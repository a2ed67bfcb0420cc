// Shared informers: one list-and-watch per resource (and scope) for all the
// controllers of a process, however many ask for it, so N controllers cost
// the server one watch, not N.

import { setMaxListeners } from "node:events";
import type { MetricsRegistry } from "../component/metrics/index.js";
import type { ApiObject } from "../machinery/index.js";
import { Informer, type InformerOptions } from "./informer.js";
import type { ResourceRef, RestClient } from "./rest.js";

export interface InformerFactoryOptions {
  client: RestClient;
  log?: (line: string) => void;
  /** Defaults for every informer (page size, backoff, resync period (upstream's defaultResync)...). */
  defaults?: Partial<Pick<InformerOptions, "pageSize" | "initialBackoffMs" | "maxBackoffMs" | "watchTimeoutSeconds" | "stallTimeoutMs" | "resyncPeriodMs">>;
  /** The component's registry, handed to every informer (informer_* metrics). */
  metrics?: MetricsRegistry;
}

export interface InformerRequest {
  resource: ResourceRef;
  namespace?: string;
  metadataOnly?: boolean;
}

export class InformerFactory {
  readonly #options: InformerFactoryOptions;
  readonly #informers = new Map<string, Informer>();
  #signal: AbortSignal | undefined;

  constructor(options: InformerFactoryOptions) {
    this.#options = options;
  }

  /** The shared informer for this resource and scope; started at once if the factory already runs. */
  informerFor<T extends ApiObject = ApiObject>(request: InformerRequest): Informer<T> {
    const r = request.resource;
    const key = `${r.group}/${r.version}/${r.resource}|${request.namespace ?? ""}|${request.metadataOnly ? "meta" : "full"}`;
    let informer = this.#informers.get(key);
    if (informer === undefined) {
      informer = new Informer({
        ...this.#options.defaults,
        client: this.#options.client,
        resource: r,
        ...(request.namespace !== undefined ? { namespace: request.namespace } : {}),
        ...(request.metadataOnly ? { metadataOnly: true } : {}),
        ...(this.#options.log ? { log: this.#options.log } : {}),
        ...(this.#options.metrics ? { metrics: this.#options.metrics } : {}),
      });
      this.#informers.set(key, informer);
      if (this.#signal !== undefined) void informer.run(this.#signal);
    }
    return informer as unknown as Informer<T>;
  }

  /** Runs every informer asked for so far, and every later one, until the signal fires. */
  start(signal: AbortSignal): void {
    if (this.#signal !== undefined) return;
    // One signal of our own for all informers: each of their requests listens on it, and there may be
    // dozens — more than the default listener limit of a signal we do not own.
    const own = new AbortController();
    setMaxListeners(0, own.signal);
    if (signal.aborted) own.abort();
    else signal.addEventListener("abort", () => own.abort(), { once: true });
    this.#signal = own.signal;
    for (const informer of this.#informers.values()) void informer.run(own.signal);
  }

  /** Resolves when every informer asked for so far has synced; false when the signal fired first. */
  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const all = Promise.all([...this.#informers.values()].map((i) => i.waitForSync())).then(() => true);
    if (signal === undefined) return all;
    if (signal.aborted) return false;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<boolean>((resolve) => {
      onAbort = () => resolve(false);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([all, aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }
}
