// Shared informers: one list-and-watch per resource (and scope) for all the
// controllers of a process, however many ask for it, so N controllers cost
// the server one watch, not N.

import { setMaxListeners } from "node:events";
import type { MetricsRegistry } from "../component/metrics/index.js";
import type { ApiObject } from "../machinery/index.js";
import { Informer, dropManagedFields, type InformerOptions } from "./informer.js";
import type { ResourceRef, RestClient } from "./rest.js";

export interface InformerFactoryOptions {
  client: RestClient;
  log?: (line: string) => void;
  /** Defaults for every informer (page size, backoff, resync period (upstream's defaultResync)...). */
  defaults?: Partial<Pick<InformerOptions, "pageSize" | "initialBackoffMs" | "maxBackoffMs" | "watchTimeoutSeconds" | "stallTimeoutMs" | "resyncPeriodMs" | "transform">>;
  /** Keep metadata.managedFields in the caches (default: dropped, `dropManagedFields`; the components' informers never read them). */
  keepManagedFields?: boolean;
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

  /**
   * A view of this factory for one part of the process whose life is shorter
   * than the process's (a leader-elected controller manager or scheduler in
   * `orch server`): it hands out this factory's informers, so several parts
   * hold one cache per resource instead of one each, and the handlers the
   * part adds are removed when the signal it starts with fires, while the
   * informers keep running for the next term. The parent runs the informers
   * (start it first; a view started before it starts it with its own signal).
   */
  view(): InformerFactory {
    return new InformerView(this);
  }

  /**
   * The shared informer for this resource and scope; started at once if the
   * factory already runs. A metadata-only request is served by the full
   * informer of the same resource and scope when there is one: its objects
   * carry all the metadata (and more), and a second cache and watch of the
   * same objects would cost the process and the API server twice (at 30,000
   * pods, the garbage collector's metadata informer beside the controllers'
   * pod informer).
   */
  informerFor<T extends ApiObject = ApiObject>(request: InformerRequest): Informer<T> {
    const r = request.resource;
    const scope = `${r.group}/${r.version}/${r.resource}|${request.namespace ?? ""}`;
    const key = `${scope}|${request.metadataOnly ? "meta" : "full"}`;
    let informer = (request.metadataOnly ? this.#informers.get(`${scope}|full`) : undefined) ?? this.#informers.get(key);
    if (informer === undefined) {
      informer = new Informer({
        ...(this.#options.keepManagedFields ? {} : { transform: dropManagedFields }),
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

/** InformerFactory.view(): the parent's informers, with the handlers added through them scoped to the view's run. */
class InformerView extends InformerFactory {
  readonly #parent: InformerFactory;
  readonly #handed = new Map<Informer, Informer>();
  readonly #removers: (() => void)[] = [];
  #signal: AbortSignal | undefined;

  constructor(parent: InformerFactory) {
    // Every method that would use the options is overridden to go to the parent: the view makes no informer of its own.
    super({ client: undefined as never });
    this.#parent = parent;
  }

  override informerFor<T extends ApiObject = ApiObject>(request: InformerRequest): Informer<T> {
    const informer = this.#parent.informerFor<T>(request) as unknown as Informer;
    let handed = this.#handed.get(informer);
    if (handed === undefined) this.#handed.set(informer, (handed = this.#scoped(informer)));
    return handed as unknown as Informer<T>;
  }

  override start(signal: AbortSignal): void {
    if (this.#signal !== undefined) return;
    this.#signal = signal;
    this.#parent.start(signal);
    if (signal.aborted) this.#removeAll();
    else signal.addEventListener("abort", () => this.#removeAll(), { once: true });
  }

  override async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const all = Promise.all([...this.#handed.keys()].map((i) => i.waitForSync(signal)));
    return (await all).every(Boolean);
  }

  /** The informer, but addEventHandler remembers its remover for the end of the view's run. */
  #scoped(informer: Informer): Informer {
    const addEventHandler: Informer["addEventHandler"] = (handlers, options) => {
      const remove = informer.addEventHandler(handlers, options);
      if (this.#signal?.aborted) remove();
      else this.#removers.push(remove);
      return remove;
    };
    const bound = new Map<PropertyKey, unknown>();
    return new Proxy(informer, {
      get(target, prop) {
        if (prop === "addEventHandler") return addEventHandler;
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        let fn = bound.get(prop);
        if (fn === undefined) bound.set(prop, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
        return fn;
      },
    });
  }

  #removeAll(): void {
    for (const remove of this.#removers.splice(0)) remove();
  }
}
