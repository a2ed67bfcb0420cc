// The services a pod's service-link variables come from, read from a watch
// (an informer over all namespaces, as upstream's kubelet keeps a service
// lister) instead of one LIST of the namespace per container start: that
// LIST was one HTTP/2 stream and a JSON decode of every service in the
// namespace for each pod, a visible share of the agent's CPU per pod start
// (bench/nodeagent). The watch starts with the first container that asks,
// so an agent whose pods all set enableServiceLinks: false never opens it.
// Until the first list has arrived a start fails with upstream's error and is
// retried: variables built from an empty cache would be silently wrong.

import type { Service } from "../../api/core/types.js";
import { SERVICES } from "../../api/resource-refs.js";
import { Informer, type RestClient } from "../../client/index.js";
import { NAMESPACE_INDEX } from "../../client/indexer.js";

/** How long a container start waits for the first list before failing (and being retried). */
export const FIRST_SYNC_WAIT_MS = 10_000;

export class ServiceCache {
  readonly #client: RestClient;
  readonly #signal: AbortSignal;
  readonly #waitMs: number;
  #informer: Informer<Service> | undefined;

  /** `signal` stops the watch (the agent's shutdown). */
  constructor(client: RestClient, signal: AbortSignal, waitMs = FIRST_SYNC_WAIT_MS) {
    this.#client = client;
    this.#signal = signal;
    this.#waitMs = waitMs;
  }

  async services(namespace: string): Promise<readonly Service[]> {
    const informer = this.#start();
    if (!informer.hasSynced()) {
      const timeout = AbortSignal.timeout(this.#waitMs);
      await informer.waitForSync(AbortSignal.any([this.#signal, timeout]));
      if (!informer.hasSynced()) throw new Error("services have not yet been read at least once, cannot construct envvars");
    }
    return informer.byIndex(NAMESPACE_INDEX, namespace);
  }

  #start(): Informer<Service> {
    if (this.#informer === undefined) {
      this.#informer = new Informer<Service>({ client: this.#client, resource: SERVICES });
      void this.#informer.run(this.#signal);
    }
    return this.#informer;
  }
}
