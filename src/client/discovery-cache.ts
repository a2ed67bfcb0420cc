// What the server serves, remembered: discovery answers kept for a while,
// reduced to each resource's preferred version, and looked up by kind (an
// ownerReference names a kind; calls need a resource). Upstream's cached
// discovery plus RESTMapper, in one small class.

import { parseGroupVersion } from "../machinery/index.js";
import type { DiscoveredResource, RestClient } from "./rest.js";

/** An unknown kind triggers a rediscovery at most this often. */
const MISS_REFRESH_MS = 5_000;

export interface DiscoveryCacheOptions {
  client: RestClient;
  /** How long an answer is reused by resources() (default 30 s). */
  maxAgeMs?: number;
}

export class DiscoveryCache {
  readonly #client: RestClient;
  readonly #maxAgeMs: number;
  #all: DiscoveredResource[] = [];
  #preferred: DiscoveredResource[] = [];
  #at = 0;
  #inflight: Promise<DiscoveredResource[]> | undefined;

  constructor(options: DiscoveryCacheOptions) {
    this.#client = options.client;
    this.#maxAgeMs = options.maxAgeMs ?? 30_000;
  }

  /** Preferred-version resources, from the cache while it is fresh. */
  async resources(): Promise<DiscoveredResource[]> {
    if (this.#at > 0 && Date.now() - this.#at < this.#maxAgeMs) return this.#preferred;
    return this.refresh();
  }

  /** Asks the server again (concurrent callers share one round of requests). */
  refresh(): Promise<DiscoveredResource[]> {
    this.#inflight ??= this.#client
      .discover()
      .then((all) => {
        this.#all = all;
        this.#preferred = all.filter((r) => r.preferred);
        this.#at = Date.now();
        return this.#preferred;
      })
      .finally(() => (this.#inflight = undefined));
    return this.#inflight;
  }

  /**
   * The resource serving `kind` in the group of `apiVersion`: that version
   * when served, else the preferred one (versions of a group share objects).
   */
  forKind(apiVersion: string, kind: string): DiscoveredResource | undefined {
    let gv;
    try {
      gv = parseGroupVersion(apiVersion);
    } catch {
      return undefined;
    }
    const matches = this.#all.filter((r) => r.group === gv.group && r.kind === kind);
    return matches.find((r) => r.version === gv.version) ?? matches.find((r) => r.preferred) ?? matches[0];
  }

  /**
   * Like forKind, asking the server again when the kind is unknown (a resource
   * added since) — at most every few seconds, so a reference to a kind that
   * does not exist cannot turn into a stream of discovery requests.
   */
  async lookupKind(apiVersion: string, kind: string): Promise<DiscoveredResource | undefined> {
    const found = this.forKind(apiVersion, kind);
    if (found !== undefined || Date.now() - this.#at < MISS_REFRESH_MS) return found;
    await this.refresh();
    return this.forKind(apiVersion, kind);
  }
}
