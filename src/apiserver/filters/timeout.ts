// The request timeout (upstream's WithRequestDeadline and
// WithTimeoutForNonLongRunningRequests, --request-timeout): a request that is
// not long-running gets `--request-timeout` (default 60 s), or the `?timeout=`
// it asks for when that is shorter; when it runs longer, the client gets a
// 504 Timeout Status at once and whatever the handler answers later is
// dropped (the handler itself finishes in the background, holding its
// in-flight slot until then, as upstream's). A handler that had started its
// answer when time ran out has the stream reset instead, as upstream aborts
// it. Watches, log streams and upgrades (exec) are long-running: they have
// their own limits (a watch's timeoutSeconds, --min-request-timeout).
// It sits outside authentication, as upstream's: the time counts from the
// start, and the errors filter inside it still answers the handler's errors.

import { badRequest, parseDuration, timeout } from "../../machinery/index.js";
import type { Outgoing } from "../http/respond.js";
import { isLongRunning } from "../request-metrics.js";
import type { Filter } from "./context.js";
import { answerError, type ErrorsOptions } from "./errors.js";

export interface TimeoutOptions extends ErrorsOptions {
  /** --request-timeout in milliseconds; 0: no timeout. */
  readonly requestTimeoutMs: number;
}

/** Upstream's wording: `Timeout: request did not complete within requested timeout - context deadline exceeded`. */
export const REQUEST_TIMED_OUT = "request did not complete within requested timeout - context deadline exceeded";

/** Undefined when --request-timeout is 0: no filter, no hop. */
export function timeoutFilter(options: TimeoutOptions): Filter | undefined {
  if (options.requestTimeoutMs <= 0) return undefined;
  return async (ctx, next) => {
    const x = ctx.exchange;
    if (x.kind === "upgrade" || isLongRunning(ctx.req, ctx.path, ctx.url.searchParams)) return next();
    let ms: number;
    try {
      ms = requestTimeout(ctx.url.searchParams.get("timeout"), options.requestTimeoutMs);
    } catch (err) {
      return answerError(ctx, err, options);
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), ms);
    });
    const run = next();
    try {
      if ((await Promise.race([run, expired])) !== "expired") return;
    } finally {
      clearTimeout(timer);
    }
    // Time is up: the handler keeps running, but its answer goes nowhere.
    run.catch(() => {});
    if (x.res.headersSent) {
      (x.res as { destroy?: () => void }).destroy?.();
      return;
    }
    answerError(ctx, timeout(REQUEST_TIMED_OUT, 0), options);
    mute(x.res);
  };
}

/**
 * The request's time: `?timeout=` (a Go duration) when given and shorter than
 * the server's, else the server's; 400 for one that does not parse (upstream's
 * message), and a zero or negative one leaves the server's.
 */
export function requestTimeout(param: string | null, serverMs: number): number {
  if (param === null || param === "") return serverMs;
  let ms: number;
  try {
    ms = parseDuration(param);
  } catch (err) {
    throw badRequest(`invalid timeout specified in the request URL - time: ${(err as Error).message}`);
  }
  return ms > 0 && ms < serverMs ? ms : serverMs;
}

/** After the 504: the late handler's writes are dropped (the response has ended). */
function mute(res: Outgoing): void {
  const out = res as unknown as Record<string, unknown>;
  for (const method of ["writeHead", "setHeader", "appendHeader", "removeHeader", "flushHeaders", "write", "end"]) {
    if (typeof out[method] === "function") out[method] = method === "write" ? () => true : () => res;
  }
}
