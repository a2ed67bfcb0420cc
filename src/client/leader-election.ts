// Leader election on a Lease (coordination.<suffix>/v1), as client-go's: take the lease when free or
// unrenewed for leaseDurationSeconds (timed on our own clock), renew every retry period, stop leading
// when renewals fail for renewDeadline. PUT with resourceVersion keeps racing candidates safe.

import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import type { Naming } from "../machinery/naming.js";
import { formatMicroTimestamp, isApiError } from "../machinery/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { leaderElectionMetrics, type LeaderElectionMetrics } from "./metrics.js";
import type { ResourceRef, RestClient } from "./rest.js";
import { sleep } from "../machinery/until.js";
import { leaseResource } from "../api/resource-refs.js";
import type { Lease, LeaseSpec } from "../api/coordination/types.js";

export type { Lease, LeaseSpec };

export interface LeaderElectionOptions {
  client: RestClient;
  lease: { namespace: string; name: string };
  /** Unique per candidate (default: hostname_uuid, as upstream). */
  identity?: string;
  /** Where the coordination group comes from (default: the orch.io naming table). */
  naming?: Naming;
  /** How long others wait after the last renewal before taking over (default 15 s; stored in whole seconds). */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading (default 10 s). */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew (default 2 s). */
  retryPeriodMs?: number;
  /** On stop, hand the lease back at once so a successor need not wait out the duration (default true). */
  releaseOnCancel?: boolean;
  /** Called once leading; `signal` fires when leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  onStoppedLeading?(): void;
  /** The holder changed (ourselves included). */
  onNewLeader?(identity: string): void;
  log?: (line: string) => void;
  /** The component's registry: leader_election_master_status and leader_election_slowpath_total. */
  metrics?: MetricsRegistry;
}

export { leaseResource };

export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

export class LeaderElector {
  readonly identity: string;
  readonly #o: LeaderElectionOptions;
  readonly #ref: ResourceRef;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  /** The last lease record we saw, and when (our clock) it changed. */
  #observed: Lease | undefined;
  #observedSpec = "";
  #observedAt = 0;
  #leader = "";
  #leading = false;
  readonly #metrics: { m: LeaderElectionMetrics; labels: { name: string } } | undefined;
  /** The lease's requests go over a session of their own (the constructor's comment says why). */
  readonly #client: RestClient;

  constructor(options: LeaderElectionOptions) {
    this.#o = options;
    // Renewals on an HTTP/2 session of their own, as upstream's components give leader election a client of its
    // own: on the component's session a renewal's answer is written after whatever the server has queued there,
    // the informers' watch events first (30,000 pods' worth under load).
    this.#client = options.client.ownSession();
    this.identity = options.identity ?? defaultIdentity();
    this.#ref = leaseResource(options.naming);
    this.#leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.#renewDeadlineMs >= this.#leaseDurationMs) throw new Error("leader election: renewDeadline must be shorter than leaseDuration");
    if (this.#retryPeriodMs >= this.#renewDeadlineMs) throw new Error("leader election: retryPeriod must be shorter than renewDeadline");
    if (options.metrics !== undefined) {
      this.#metrics = { m: leaderElectionMetrics(options.metrics), labels: { name: options.lease.name } };
      this.#metrics.m.masterStatus.set(this.#metrics.labels, 0);
    }
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed ("" when none). */
  get leader(): string {
    return this.#leader;
  }

  /**
   * Campaigns until leading, leads until the lease is lost or the signal
   * fires, then returns (upstream's processes exit then, and so should ours).
   */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await this.#campaignAndLead(signal);
    } finally {
      this.#client.close();
    }
  }

  async #campaignAndLead(signal: AbortSignal): Promise<void> {
    if (!(await this.#acquire(signal))) return;
    const leading = new AbortController();
    // Every controller of a manager listens to it: no "possible leak" warning for a known fan-out.
    setMaxListeners(0, leading.signal);
    const stop = () => leading.abort();
    signal.addEventListener("abort", stop, { once: true });
    this.#leading = true;
    this.#metrics?.m.masterStatus.set(this.#metrics.labels, 1);
    let work: Promise<void> | undefined;
    try {
      work = Promise.resolve()
        .then(() => this.#o.onStartedLeading(leading.signal))
        .catch((err: unknown) => this.#log(`onStartedLeading failed: ${err instanceof Error ? err.message : String(err)}`));
      await this.#renew(leading.signal);
    } finally {
      this.#leading = false;
      this.#metrics?.m.masterStatus.set(this.#metrics.labels, 0);
      leading.abort();
      signal.removeEventListener("abort", stop);
      await work;
      try {
        this.#o.onStoppedLeading?.();
      } finally {
        if (signal.aborted && (this.#o.releaseOnCancel ?? true)) await this.#release();
      }
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew(AbortSignal.any([signal, AbortSignal.timeout(this.#renewDeadlineMs)]))) {
        this.#log(`acquired lease ${this.#o.lease.namespace}/${this.#o.lease.name}`);
        return true;
      }
      await sleep(jitter(this.#retryPeriodMs), signal);
    }
    return false;
  }

  /** Renews every retry period; returns when a renewal could not be made within renewDeadline, or on abort. */
  async #renew(signal: AbortSignal): Promise<void> {
    let lastRenewed = Date.now();
    while (!signal.aborted) {
      await sleep(this.#retryPeriodMs, signal);
      if (signal.aborted) return;
      const left = this.#renewDeadlineMs - (Date.now() - lastRenewed);
      if (left > 0 && (await this.#tryAcquireOrRenew(AbortSignal.any([signal, AbortSignal.timeout(left)])))) {
        lastRenewed = Date.now();
        continue;
      }
      if (signal.aborted) return;
      if (Date.now() - lastRenewed >= this.#renewDeadlineMs) {
        this.#log(`failed to renew lease ${this.#o.lease.namespace}/${this.#o.lease.name} within ${this.#renewDeadlineMs} ms; stopping leading`);
        return;
      }
    }
  }

  /** One attempt; false when someone else holds a live lease, or on any error (retried later). */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { namespace, name } = this.#o.lease;
    const now = new Date();
    // Taking a lease we do not hold (rather than renewing ours) is upstream's slow path.
    if (!this.#leading) this.#metrics?.m.slowpathTotal.inc(this.#metrics.labels);
    const mine = (old: LeaseSpec | undefined): LeaseSpec => {
      const held = old?.holderIdentity === this.identity;
      return {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.max(1, Math.round(this.#leaseDurationMs / 1000)),
        acquireTime: held && old?.acquireTime ? old.acquireTime : formatMicroTimestamp(now),
        renewTime: formatMicroTimestamp(now),
        leaseTransitions: old === undefined ? 0 : held ? old.leaseTransitions ?? 0 : (old.leaseTransitions ?? 0) + 1,
      };
    };
    try {
      let current: Lease;
      try {
        current = await this.#client.get<Lease>(this.#ref, { namespace, name, signal });
      } catch (err) {
        if (!isApiError(err, "NotFound")) throw err;
        const created = await this.#client.create<Lease>(
          this.#ref,
          { apiVersion: `${this.#ref.group}/v1`, kind: "Lease", metadata: { name, namespace }, spec: mine(undefined) },
          { signal },
        );
        this.#observe(created);
        return true;
      }
      this.#observe(current);
      const spec = current.spec ?? {};
      const holder = spec.holderIdentity ?? "";
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      if (holder !== "" && holder !== this.identity && this.#observedAt + durationMs > Date.now()) return false;
      const updated = await this.#client.update<Lease>(this.#ref, { ...current, spec: { ...spec, ...mine(spec) } }, { signal });
      this.#observe(updated);
      return true;
    } catch (err) {
      if (!signal.aborted && !isApiError(err, "Conflict") && !isApiError(err, "AlreadyExists")) {
        this.#log(`lease ${namespace}/${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return false;
    }
  }

  /** Hand the lease back: holder cleared, so a candidate takes it at its next try. */
  async #release(): Promise<void> {
    const { namespace, name } = this.#o.lease;
    try {
      const current = await this.#client.get<Lease>(this.#ref, { namespace, name, signal: AbortSignal.timeout(this.#renewDeadlineMs) });
      if (current.spec?.holderIdentity !== this.identity) return;
      const now = formatMicroTimestamp();
      await this.#client.update<Lease>(
        this.#ref,
        { ...current, spec: { ...current.spec, holderIdentity: "", leaseDurationSeconds: 1, acquireTime: now, renewTime: now } },
        { signal: AbortSignal.timeout(this.#renewDeadlineMs) },
      );
      this.#log(`released lease ${namespace}/${name}`);
    } catch (err) {
      this.#log(`releasing lease ${namespace}/${name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Remember when the record last changed, on our clock (the holder's clock may be off). */
  #observe(lease: Lease): void {
    const spec = JSON.stringify(lease.spec ?? {});
    if (spec !== this.#observedSpec) {
      this.#observedSpec = spec;
      this.#observedAt = Date.now();
    }
    this.#observed = lease;
    const holder = lease.spec?.holderIdentity ?? "";
    if (holder !== this.#leader) {
      this.#leader = holder;
      if (holder !== "") this.#o.onNewLeader?.(holder);
    }
  }

  /** The lease record last seen (for status pages and tests). */
  get observedLease(): Lease | undefined {
    return this.#observed;
  }

  #log(line: string): void {
    this.#o.log?.(`leader election (${this.identity}): ${line}`);
  }
}

function jitter(ms: number): number {
  return Math.round(ms * (1 + Math.random() * 0.2));
}

