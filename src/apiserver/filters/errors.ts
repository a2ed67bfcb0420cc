// Every failure leaves the server as a Status object (seed 000, "Errors"):
// an ApiError thrown anywhere after this filter is answered with its Status,
// anything else is logged and answered as a 500. Upstream's panic recovery;
// it sits inside the metrics filter (not outermost, as upstream's) because
// here errors are thrown rather than written by the filter that found them,
// and the metrics must see the code the error was answered with.

import { rawReply } from "../../component/index.js";
import { isApiError, statusFromError } from "../../machinery/index.js";
import { sendError, type Encoding } from "../http/respond.js";
import type { Filter, RequestContext } from "./context.js";

export interface ErrorsOptions {
  /** Formats on offer for the Status (a Protobuf client gets Protobuf). */
  readonly encoding: Encoding;
  readonly log: (line: string) => void;
}

export function errorsFilter(options: ErrorsOptions): Filter {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      answerError(ctx, err, options);
    }
  };
}

/** Answers `err` as a Status on the exchange (the upgrade socket or the response). */
export function answerError(ctx: RequestContext, err: unknown, { encoding, log }: ErrorsOptions): void {
  const x = ctx.exchange;
  const { req } = x;
  if (!isApiError(err) && clientGone(req, err)) {
    // Not the server's fault and nothing to answer: one short line, no stack.
    log(`client went away during ${req.method} ${req.url}: ${(err as Error)?.message ?? String(err)}`);
    if (x.kind === "upgrade") x.socket.destroy();
    else x.res.destroy?.();
    return;
  }
  if (!isApiError(err)) log(`internal error on ${x.kind === "upgrade" ? "upgrade " : ""}${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
  if (x.kind === "upgrade") {
    const status = statusFromError(err);
    x.statusCode = status.code ?? 500;
    rawReply(x.socket, x.statusCode, JSON.stringify(status), "application/json");
    return;
  }
  try {
    sendError(x.res, err, { req, encoding });
  } catch {
    x.res.destroy?.();
  }
}

/** The client closed the connection (or reset the stream) while the request was being read or served. */
function clientGone(req: { destroyed?: boolean; aborted?: boolean }, err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || code === "ERR_HTTP2_STREAM_ERROR" || code === "EPIPE") return true;
  return (err as Error | undefined)?.message === "aborted" || req.aborted === true;
}
