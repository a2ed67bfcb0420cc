// The node lease heartbeat (seed 001, "Heartbeats" 3): a Lease named after the
// node in orch-node-lease, created then renewed every quarter of its duration
// (10 s for the default 40 s, as upstream's renew fraction); when the API fails,
// retries wait 200 ms, doubling, capped at 7 s (upstream's lease controller).

import type { Lease } from "../../api/coordination/types.js";
import type { Naming } from "../../machinery/naming.js";
import { leaseResource, type RestClient } from "../../client/index.js";
import { isApiError, type ObjectMeta } from "../../machinery/index.js";
import { realClock, type Clock } from "../clock/clock.js";

/** The three calls the heartbeat needs ; fakeable in tests. */
export interface LeaseApi {
  get(namespace: string, name: string): Promise<Lease>;
  create(lease: Lease): Promise<Lease>;
  update(lease: Lease): Promise<Lease>;
}

export interface NodeLeaseOptions {
  api: LeaseApi;
  nodeName: string;
  namespace: string;
  leaseDurationSeconds: number;
  /** "coordination.orch.io/v1" (from the naming table). */
  apiVersion: string;
  /** Default a quarter of leaseDurationSeconds (upstream's nodeLeaseRenewIntervalFraction): 10 s for 40 s. */
  renewIntervalMs?: number;
  /** The Node's uid, for the owner reference (so the lease goes with its node). */
  nodeUid?: () => string | undefined;
  clock?: Clock;
  log?: (line: string) => void;
}

export const INITIAL_BACKOFF_MS = 200;
export const MAX_BACKOFF_MS = 7_000;
/** Updates tried in a row before a renewal is given up until the next interval (upstream's maxUpdateRetries). */
const MAX_UPDATE_RETRIES = 5;

/** RFC 3339 with microseconds, as upstream's MicroTime. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export class NodeLease {
  readonly #o: Required<Omit<NodeLeaseOptions, "nodeUid" | "log">> & Pick<NodeLeaseOptions, "nodeUid" | "log">;
  #latest: Lease | undefined;

  constructor(options: NodeLeaseOptions) {
    this.#o = { renewIntervalMs: options.leaseDurationSeconds * 250, clock: realClock, ...options };
  }

  /** Renews until the signal fires. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.sync(signal);
      await this.#o.clock.sleep(this.#o.renewIntervalMs, signal);
    }
  }

  /** One heartbeat: update the lease we hold, or (re)create it, backing off while the API fails. */
  async sync(signal: AbortSignal): Promise<void> {
    if (this.#latest !== undefined) {
      try {
        await this.#retryUpdate(this.#latest, signal);
        return;
      } catch (err) {
        this.#o.log?.(`node lease: ${(err as Error).message}; will re-read the lease`);
      }
    }
    const lease = await this.#backoffEnsure(signal);
    if (lease === undefined) return;
    // A lease that existed before (an agent restart) still needs our renew time.
    if (this.#created) this.#latest = lease;
    else await this.#retryUpdate(lease, signal).catch((err) => this.#o.log?.(`node lease: ${(err as Error).message}`));
  }

  #created = false;

  async #backoffEnsure(signal: AbortSignal): Promise<Lease | undefined> {
    let sleep = INITIAL_BACKOFF_MS / 2;
    while (!signal.aborted) {
      try {
        return await this.#ensure();
      } catch (err) {
        sleep = Math.min(sleep * 2, MAX_BACKOFF_MS);
        this.#o.log?.(`node lease: failed to ensure the lease exists, will retry in ${sleep} ms: ${(err as Error).message}`);
        await this.#o.clock.sleep(sleep, signal);
      }
    }
    return undefined;
  }

  async #ensure(): Promise<Lease> {
    const { api, namespace, nodeName } = this.#o;
    try {
      const lease = await api.get(namespace, nodeName);
      this.#created = false;
      return lease;
    } catch (err) {
      if (!isApiError(err) || err.code !== 404) throw err;
    }
    const lease = await api.create(this.#desired({ apiVersion: this.#o.apiVersion, kind: "Lease", metadata: { name: nodeName, namespace } }));
    this.#created = true;
    return lease;
  }

  async #retryUpdate(base: Lease, signal: AbortSignal): Promise<void> {
    for (let i = 0; i < MAX_UPDATE_RETRIES && !signal.aborted; i++) {
      try {
        this.#latest = await this.#o.api.update(this.#desired(base));
        return;
      } catch (err) {
        if (isApiError(err) && err.code === 409) {
          const fresh = await this.#backoffEnsure(signal);
          if (fresh === undefined) return;
          base = fresh;
          continue;
        }
        this.#o.log?.(`node lease: failed to update: ${(err as Error).message}`);
      }
    }
    this.#latest = undefined;
    throw new Error(`failed ${MAX_UPDATE_RETRIES} attempts to update the lease`);
  }

  #desired(base: Lease): Lease {
    const { nodeName, leaseDurationSeconds, clock } = this.#o;
    const metadata: ObjectMeta = { ...base.metadata };
    const uid = this.#o.nodeUid?.();
    if (uid && !(metadata.ownerReferences ?? []).some((r) => r.uid === uid)) {
      metadata.ownerReferences = [{ apiVersion: "v1", kind: "Node", name: nodeName, uid }];
    }
    return {
      ...base,
      metadata,
      spec: { ...base.spec, holderIdentity: nodeName, leaseDurationSeconds, renewTime: microTime(clock.now()) },
    };
  }
}

/** The heartbeat's calls through the API client, on the naming table's Lease resource. */
export function leaseApi(client: RestClient, naming: Naming): LeaseApi {
  const ref = leaseResource(naming);
  return {
    get: (namespace, name) => client.get<Lease>(ref, { namespace, name }),
    create: (lease) => client.create<Lease>(ref, lease),
    update: (lease) => client.update<Lease>(ref, lease),
  };
}
