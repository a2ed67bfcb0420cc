// The in-flight limit (upstream's WithMaxInFlightLimit, --max-requests-inflight
// and --max-mutating-requests-inflight): at most so many requests are served
// at once, reads and writes counted apart. One over the limit waits in a
// first-come queue of its kind for up to --inflight-queue-wait (as API
// Priority and Fairness queues instead of refusing; the queue holds at most
// as many as the limit), and is answered 429 TooManyRequests with
// `Retry-After: 1` when the queue is full or its wait runs out, before
// authorization and the handler spend anything on it. With a wait of 0 it is
// refused at once, as upstream's max-in-flight filter does. Refusing at once
// under a burst (a ReplicaSet creating 500 pods) sent every client to sleep
// a second while the server sat idle: bench/density at 1,000 nodes saw
// 15,000 refused pod creates and 2,700 refused lease renewals, and 12 % of
// the server's samples idle. Long-running requests (watches, log streams,
// exec/attach/port-forward) are exempt, as upstream: they would hold their
// slot for minutes. A limit of 0 turns that kind's limit off. Nobody is exempt
// by group (system:masters included).
//
// Leases wait in lanes of their own, a tenth of each limit each (at least one
// slot), as API Priority and Fairness gives them their own priority levels:
// node heartbeats (leases in the node-lease namespace, upstream's node-high)
// and every other lease, leader election first of all (upstream's
// leader-election). A flood of pod writes must not starve the renewals that
// keep nodes Ready and leaders leading: under load (bench/density at 1,000
// nodes) the writes' queue stays full of pod writes, and a renewal behind them
// waits its turn or is refused. Nor must 1,000 nodes' heartbeats (100 a
// second) starve the two leaders' renewals: a leader that cannot renew within
// its deadline stops leading, and its controllers start over.
//
// Seed 002's apiserver_flowcontrol_request_wait_duration_seconds times every
// wait, labelled with the bootstrap flow schema and priority level each lane
// stands for; the wait is also what the request's SLI duration leaves out
// (request-metrics.ts).

import { tooManyRequests } from "../../machinery/index.js";
import { isLongRunning, type ApiServerMetrics } from "../request-metrics.js";
import type { Filter } from "./context.js";

export interface InflightOptions {
  /** Reads (get, list) served at once; 0: no limit. */
  readonly maxRequestsInflight: number;
  /** Writes (everything but get, list, watch) served at once; 0: no limit. */
  readonly maxMutatingRequestsInflight: number;
  /** How long a request over the limit may wait for a slot (ms; 0: refused at once). */
  readonly queueWaitMs?: number;
  /** The coordination group: its leases have lanes of their own. */
  readonly coordinationGroup: string;
  /** Where nodes' heartbeat leases live: their lane is apart from the other leases' (leader election). */
  readonly nodeLeaseNamespace: string;
  /** Where waits are recorded; undefined: not recorded. */
  readonly metrics?: ApiServerMetrics | undefined;
}

/** A lane's queue as the flow-control metrics name it: the bootstrap flow schema and priority level it stands for. */
interface QueueName {
  readonly flow_schema: string;
  readonly priority_level: string;
}

const WORK: QueueName = { flow_schema: "global-default", priority_level: "global-default" };
const NODE_LEASES: QueueName = { flow_schema: "system-nodes", priority_level: "node-high" };
const OTHER_LEASES: QueueName = { flow_schema: "system-leader-election", priority_level: "leader-election" };

/** The slots of one kind and the requests waiting for one, first come first served. */
class Slots {
  #busy = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** True once a slot is held; false when the queue is full or `waitMs` passed first. */
  async acquire(waitMs: number): Promise<boolean> {
    if (this.#busy < this.limit) {
      this.#busy++;
      return true;
    }
    if (waitMs <= 0 || this.#waiting.length >= this.limit) return false;
    return new Promise<boolean>((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        resolve(false);
      }, waitMs);
      this.#waiting.push(grant);
    });
  }

  /** The slot goes to the first waiting request, or back to the pool. */
  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#busy--;
  }
}

/** Upstream's wording (its max-in-flight filter). */
export const TOO_MANY_REQUESTS = "Too many requests, please try again later.";
const READ_VERBS = new Set(["get", "list", "watch"]);

/** Undefined when both limits are off: no filter, no hop. */
export function inflightFilter(options: InflightOptions): Filter | undefined {
  const { maxRequestsInflight, maxMutatingRequestsInflight } = options;
  if (maxRequestsInflight <= 0 && maxMutatingRequestsInflight <= 0) return undefined;
  const lane = (name: QueueName, read: number, mutating: number) => ({ waits: options.metrics?.queueWaits(name), read: new Slots(read), mutating: new Slots(mutating) });
  const work = lane(WORK, maxRequestsInflight, maxMutatingRequestsInflight);
  const nodeLeases = lane(NODE_LEASES, leaseLimit(maxRequestsInflight), leaseLimit(maxMutatingRequestsInflight));
  const otherLeases = lane(OTHER_LEASES, leaseLimit(maxRequestsInflight), leaseLimit(maxMutatingRequestsInflight));
  const waitMs = options.queueWaitMs ?? 0;
  return async (ctx, next) => {
    // Upgrades (pods/exec, attach, port-forward) are connections: long-running.
    if (ctx.exchange.kind === "upgrade" || isLongRunning(ctx.req, ctx.path, ctx.url.searchParams)) return next();
    const { apiGroup, resource, verb, namespace } = ctx.attributes;
    const lease = resource === "leases" && apiGroup === options.coordinationGroup;
    const slots = !lease ? work : namespace === options.nodeLeaseNamespace ? nodeLeases : otherLeases;
    const kind = slots[READ_VERBS.has(verb) ? "read" : "mutating"];
    if (kind.limit <= 0) return next();
    const started = performance.now();
    const admitted = await kind.acquire(waitMs);
    const waited = (performance.now() - started) / 1000;
    slots.waits?.[admitted ? "ran" : "refused"].observe(waited);
    if (ctx.record !== undefined) ctx.record.queuedSeconds = waited;
    if (!admitted) throw tooManyRequests(TOO_MANY_REQUESTS, 1);
    try {
      await next();
    } finally {
      kind.release();
    }
  };
}

/** The lease lane's share of a limit (0 stays off). */
function leaseLimit(limit: number): number {
  return limit <= 0 ? 0 : Math.max(1, Math.ceil(limit / 10));
}
