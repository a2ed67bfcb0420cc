// The API server's request path as a chain of filters, each one module with
// one job, in one order (upstream's DefaultBuildHandlerChain, outermost first):
//   1. request info      context.ts#requestContext: URL, parsed path, request attributes, once
//   2. metrics           metrics.ts
//   3. errors            errors.ts: thrown errors become Status answers (upstream's panic recovery; see there why it is not outermost)
//   4. authentication    authentication.ts: ctx.user, or 401 (audit.ts records a 401 from just before it)
//      audit             audit.ts: with --audit-policy-file, one event per stage (upstream's place: after authentication)
//   5. impersonation     impersonation.ts: a pass-through until issue 14
//      (inflight limits, issue 14: --max-requests-inflight, 429)
//   6. authorization     authorization.ts: the authorizers' decision, or 403
//      (request timeout, issue 14: --request-timeout, 504)
//   7. the handler       ../router.ts
// Requests and HTTP/1.1 Upgrades (pods/exec) run the same chain; only the
// handler and the way an answer is written (context.ts#Exchange) differ.
// Inflight limits and timeouts are not filters yet: the server has none
// of them today, and an empty filter would cost every request a hop.

import type { ApiServerMetrics } from "../request-metrics.js";
import type { Encoding } from "../http/respond.js";
import { authenticationFilter, type Authenticator } from "./authentication.js";
import { authorizationFilter, type Authorizer } from "./authorization.js";
import type { Filter } from "./context.js";
import { auditFilter, failedAuthenticationAuditFilter, type AuditOptions } from "./audit.js";
import { errorsFilter } from "./errors.js";
import { impersonationFilter } from "./impersonation.js";
import { metricsFilter } from "./metrics.js";

export type { Exchange, Filter, Handler, RequestContext, ResponseExchange, UpgradeExchange, UserInfo } from "./context.js";
export { compose, requestContext } from "./context.js";
export type { RequestAttributes } from "./request-info.js";
export { ADMIN, ANONYMOUS, TokenAuthenticator, type Authenticator } from "./authentication.js";
export type { AuditOptions } from "./audit.js";
export { alwaysAllow, type Authorizer, type Decision } from "./authorization.js";

export interface FilterChainOptions {
  readonly authenticators: readonly Authenticator[];
  readonly authorizers: readonly Authorizer[];
  /** Undefined: requests are not recorded (the benchmark measures their cost). */
  readonly metrics: ApiServerMetrics | undefined;
  readonly encoding: Encoding;
  readonly log: (line: string) => void;
  /** The audit policy and log; undefined: no audit filter at all. */
  readonly audit?: AuditOptions;
}

/** The filters in their order (stage 1, request info, is requestContext); compose them around a handler. */
export function filterChain(options: FilterChainOptions): readonly Filter[] {
  return [
    ...(options.metrics !== undefined ? [metricsFilter(options.metrics)] : []),
    errorsFilter(options),
    ...(options.audit !== undefined ? [failedAuthenticationAuditFilter(options.audit)] : []),
    authenticationFilter(options),
    ...(options.audit !== undefined ? [auditFilter({ ...options.audit, encoding: options.encoding })] : []),
    impersonationFilter,
    authorizationFilter(options),
  ];
}
