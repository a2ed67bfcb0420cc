// Request metrics (seed 002, orch-apiserver's stable metrics): begin when the
// request arrives, end when it has been answered (its code, its body size).
// An upgraded connection counts as a long-running CONNECT until it closes.

import { countResponseBytes, type ApiServerMetrics } from "../request-metrics.js";
import type { Filter } from "./context.js";

export function metricsFilter(metrics: ApiServerMetrics): Filter {
  return async (ctx, next) => {
    const x = ctx.exchange;
    const record = metrics.begin(ctx.req, ctx.path, ctx.url.searchParams);
    ctx.record = record;
    if (x.kind === "upgrade") {
      x.socket.once("close", () => metrics.end(record, x, undefined));
      return next();
    }
    const bytes = record.longRunning !== undefined ? undefined : countResponseBytes(x.res);
    try {
      await next();
    } finally {
      metrics.end(record, x.res, bytes?.());
    }
  };
}
