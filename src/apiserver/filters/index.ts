// The API server's request path as a chain of filters, each one module with
// one job, in one order (upstream's DefaultBuildHandlerChain, outermost first):
//   1. request info      context.ts#requestContext: URL, parsed path, request attributes, once
//   2. metrics           metrics.ts
//      request timeout   timeout.ts: --request-timeout, ?timeout=, 504 (outside authentication, as upstream)
//   3. errors            errors.ts: thrown errors become Status answers (upstream's panic recovery; see there why it is not outermost)
//   4. authentication    authentication.ts: ctx.user, or 401 (audit.ts records a 401 from just before it)
//      audit             audit.ts: with --audit-policy-file, one event per stage (upstream's place: after authentication)
//   5. impersonation     impersonation.ts: Impersonate-* headers, if the authorizers allow
//      in-flight limit   inflight.ts: --max-(mutating-)requests-inflight, 429
//   6. authorization     authorization.ts: the authorizers' decision, or 403
//   7. the handler       ../router.ts
// Requests and HTTP/1.1 Upgrades (pods/exec) run the same chain; only the
// handler and the way an answer is written (context.ts#Exchange) differ.
// The timeout, in-flight and audit filters are left out when their flags are
// 0 or unset: an empty filter would cost every request a hop.

import type { ApiServerMetrics } from "../request-metrics.js";
import type { Encoding } from "../http/respond.js";
import { authenticationFilter, type Authenticator } from "./authentication.js";
import { authorizationFilter, type Authorizer } from "./authorization.js";
import type { Filter } from "./context.js";
import { auditFilter, failedAuthenticationAuditFilter, type AuditOptions } from "./audit.js";
import { errorsFilter } from "./errors.js";
import { impersonationFilter } from "./impersonation.js";
import { inflightFilter, type InflightOptions } from "./inflight.js";
import { metricsFilter } from "./metrics.js";
import { timeoutFilter } from "./timeout.js";

export type { Exchange, Filter, Handler, RequestContext, ResponseExchange, UpgradeExchange, UserInfo } from "./context.js";
export { compose, requestContext } from "./context.js";
export type { RequestAttributes } from "./request-info.js";
export { ADMIN, ANONYMOUS, TokenAuthenticator, type Authenticator } from "./authentication.js";
export { clientCertificateAuthenticator } from "./client-certificates.js";
export { tokenFileAuthenticator } from "./token-file.js";
export { websocketTokenAuthenticator } from "./websocket-token.js";
export { bootstrapTokenAuthenticator } from "./bootstrap-token.js";
export type { AuditOptions } from "./audit.js";
export { alwaysAllow, decide, type Authorizer, type Decision } from "./authorization.js";

export interface FilterChainOptions {
  readonly authenticators: readonly Authenticator[];
  readonly authorizers: readonly Authorizer[];
  /** --anonymous-auth (default true). */
  readonly anonymous?: boolean;
  /** Impersonation's group of uids and userextras (naming.authenticationGroup). */
  readonly authenticationGroup: string;
  /** The group of the authorization audit annotations (naming.authorizationGroup). */
  readonly authorizationGroup?: string;
  /** Undefined: requests are not recorded (the benchmark measures their cost). */
  readonly metrics: ApiServerMetrics | undefined;
  readonly encoding: Encoding;
  readonly log: (line: string) => void;
  /** --max-requests-inflight and --max-mutating-requests-inflight (0: off). */
  readonly inflight?: InflightOptions;
  /** --request-timeout in milliseconds (0 or unset: off). */
  readonly requestTimeoutMs?: number;
  /** The audit policy and log; undefined: no audit filter at all. */
  readonly audit?: AuditOptions;
}

/** The filters in their order (stage 1, request info, is requestContext); compose them around a handler. */
export function filterChain(options: FilterChainOptions): readonly Filter[] {
  return [
    ...(options.metrics !== undefined ? [metricsFilter(options.metrics)] : []),
    ...present(timeoutFilter({ ...options, requestTimeoutMs: options.requestTimeoutMs ?? 0 })),
    errorsFilter(options),
    ...(options.audit !== undefined ? [failedAuthenticationAuditFilter(options.audit)] : []),
    authenticationFilter(options),
    ...(options.audit !== undefined ? [auditFilter({ ...options.audit, encoding: options.encoding })] : []),
    impersonationFilter(options),
    ...present(options.inflight !== undefined ? inflightFilter({ ...options.inflight, metrics: options.metrics }) : undefined),
    authorizationFilter(options),
  ];
}

function present(filter: Filter | undefined): Filter[] {
  return filter === undefined ? [] : [filter];
}
