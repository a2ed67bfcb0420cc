// The in-flight limit (upstream's WithMaxInFlightLimit, --max-requests-inflight
// and --max-mutating-requests-inflight): at most so many requests are served
// at once, reads and writes counted apart; one over the limit is answered 429
// TooManyRequests with `Retry-After: 1` at once, before authorization and the
// handler spend anything on it. Long-running requests (watches, log streams,
// exec/attach/port-forward) are exempt, as upstream: they would hold their
// slot for minutes. A limit of 0 turns that kind's limit off. Like upstream's
// max-in-flight filter, nobody is exempt by group (system:masters included);
// only API Priority and Fairness, which orch does not have, knows exemptions.

import { tooManyRequests } from "../../machinery/index.js";
import { isLongRunning } from "../request-metrics.js";
import type { Filter } from "./context.js";

export interface InflightOptions {
  /** Reads (get, list) served at once; 0: no limit. */
  readonly maxRequestsInflight: number;
  /** Writes (everything but get, list, watch) served at once; 0: no limit. */
  readonly maxMutatingRequestsInflight: number;
}

/** Upstream's wording (its max-in-flight filter). */
export const TOO_MANY_REQUESTS = "Too many requests, please try again later.";
const READ_VERBS = new Set(["get", "list", "watch"]);

/** Undefined when both limits are off: no filter, no hop. */
export function inflightFilter(options: InflightOptions): Filter | undefined {
  const { maxRequestsInflight, maxMutatingRequestsInflight } = options;
  if (maxRequestsInflight <= 0 && maxMutatingRequestsInflight <= 0) return undefined;
  const inflight = { read: 0, mutating: 0 };
  return async (ctx, next) => {
    // Upgrades (pods/exec, attach, port-forward) are connections: long-running.
    if (ctx.exchange.kind === "upgrade" || isLongRunning(ctx.req, ctx.path, ctx.url.searchParams)) return next();
    const kind = READ_VERBS.has(ctx.attributes.verb) ? "read" : "mutating";
    const limit = kind === "read" ? maxRequestsInflight : maxMutatingRequestsInflight;
    if (limit <= 0) return next();
    if (inflight[kind] >= limit) throw tooManyRequests(TOO_MANY_REQUESTS, 1);
    inflight[kind]++;
    try {
      await next();
    } finally {
      inflight[kind]--;
    }
  };
}
