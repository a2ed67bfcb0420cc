// What a request carries through the filter chain, and how filters compose.
// A filter does one job around the rest of the chain (`next`): it may stop
// the request by throwing (the errors filter turns that into a Status), or
// add what it learned to the context (the user, the metrics record).

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Incoming, Outgoing } from "../http/respond.js";
import type { RequestRecord } from "../request-metrics.js";
import { parsePath, type ParsedPath } from "../routing.js";
import { requestAttributes, type RequestAttributes } from "./request-info.js";

/** Who a request is from, as an authenticator proved it (upstream's user.Info). */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  /** Further facts an authenticator vouches for (impersonation's Impersonate-Extra-*), keys in lower case. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** An ordinary request, answered with an HTTP response (HTTP/2 or HTTP/1.1). */
export interface ResponseExchange {
  readonly kind: "response";
  readonly req: Incoming;
  readonly res: Outgoing;
}

/** An HTTP/1.1 Upgrade (pods/exec, pods/attach): answered on the raw socket. */
export interface UpgradeExchange {
  readonly kind: "upgrade";
  readonly req: IncomingMessage;
  readonly socket: Duplex;
  readonly head: Buffer;
  /** 101 once carried to the node agent; the error's code when one was answered (the metrics read it at close). */
  statusCode: number;
}

export type Exchange = ResponseExchange | UpgradeExchange;

export interface RequestContext<X extends Exchange = Exchange> {
  readonly exchange: X;
  readonly req: X["req"];
  readonly url: URL;
  /** The URL path parsed once (routing.ts). */
  readonly path: ParsedPath;
  /** What the request asks to do, for authorization (and later audit); see request-info.ts. */
  readonly attributes: RequestAttributes;
  /** Set by the authentication filter. */
  user: UserInfo | undefined;
  /** Set by the metrics filter when requests are recorded. */
  record: RequestRecord | undefined;
}

export type Filter = (ctx: RequestContext, next: () => Promise<void>) => Promise<void>;
export type Handler<C extends RequestContext> = (ctx: C) => Promise<void>;

/**
 * The chain's first stage, upstream's WithRequestInfo: the URL, its parsed
 * path and the request attributes are worked out once, here, so every filter
 * and the handler read the same facts.
 */
export function requestContext<X extends Exchange>(exchange: X): RequestContext<X> {
  const url = new URL(exchange.req.url ?? "/", "https://localhost");
  const path = parsePath(url.pathname);
  const attributes = requestAttributes(exchange.req.method ?? "GET", url, path);
  return { exchange, req: exchange.req, url, path, attributes, user: undefined, record: undefined };
}

/** Runs `filters` in order around `handler`; a filter that throws (or does not call next) stops the ones after it. */
export function compose<C extends RequestContext>(filters: readonly Filter[], handler: Handler<C>): Handler<C> {
  return (ctx) => {
    const run = (i: number): Promise<void> => (i === filters.length ? handler(ctx) : filters[i]!(ctx, () => run(i + 1)));
    try {
      return run(0);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}
