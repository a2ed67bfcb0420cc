// Who may read a component's non-public endpoints (/metrics, /statusz, ...)
// and call the node agent's port, as upstream's delegated authentication and
// authorization decide it: a client certificate of the cluster CA names the
// user (CN) and groups (O); a bearer token is sent to the API server in a
// TokenReview; then every caller is judged by a SubjectAccessReview. A
// component asks about the non-resource path; the node agent asks as
// upstream's kubelet does, about the nodes resource of its own node with a
// subresource picked by the path (nodeAgentAttributes). Answers are cached.

import { createHash } from "node:crypto";
import type { TLSSocket } from "node:tls";
import type { Request } from "./endpoints.js";

/** Who a caller is, as a TokenReview answers it or a client certificate says it. */
export interface CallerInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface ResourceAttributes {
  readonly namespace?: string;
  readonly verb: string;
  readonly group: string;
  readonly version?: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly name?: string;
}

/** One of resourceAttributes and nonResourceAttributes, as in a SubjectAccessReview's spec. */
export type AccessAttributes =
  | { readonly resourceAttributes: ResourceAttributes; readonly nonResourceAttributes?: undefined }
  | { readonly nonResourceAttributes: { readonly path: string; readonly verb: string }; readonly resourceAttributes?: undefined };

export type TokenReviewAnswer = { authenticated: true; user: CallerInfo } | { authenticated: false; error?: string };
export interface AccessReviewAnswer {
  allowed: boolean;
  reason?: string;
  evaluationError?: string;
}

/**
 * The two questions a component puts to the API server about a caller: a TokenReview and a
 * SubjectAccessReview, sent with the component's own credentials. The client layer answers them
 * (`apiServerCheck` in src/client/); component sits below client, so it only declares them.
 */
export interface ApiServerCheck {
  /** The API server's CA (PEM): the component server's client CA when none is given. */
  readonly ca?: string;
  tokenReview(token: string, audiences?: readonly string[]): Promise<TokenReviewAnswer>;
  subjectAccessReview(caller: CallerInfo, attributes: AccessAttributes): Promise<AccessReviewAnswer>;
  /** Called once, when the component server stops. */
  close(): void;
}

export type AccessDecision = { allowed: true; user: string } | { allowed: false; status: 401 | 403; reason: string };

/**
 * Who gets in, as the node agent's `authentication` and `authorization`
 * settings say (upstream's kubelet: anonymous off, token webhook on, mode
 * Webhook). The TTLs default to upstream's delegated component defaults (10 s);
 * the node agent passes its configuration's (5 min, 30 s, 2 min by default).
 */
export interface AccessPolicy {
  /** A request without credentials is system:anonymous instead of a 401 (default false). */
  readonly anonymous?: boolean;
  /** Bearer tokens are checked with a TokenReview (default true). */
  readonly tokens?: boolean;
  /**
   * AlwaysAllow: any authenticated caller (and system:anonymous when allowed);
   * Webhook (default): a SubjectAccessReview decides.
   */
  readonly mode?: "AlwaysAllow" | "Webhook";
  /** How long an allowing and a refusing SubjectAccessReview answer are reused. */
  readonly allowedTtlMs?: number;
  readonly deniedTtlMs?: number;
  /** How long a TokenReview answer is reused. */
  readonly tokenTtlMs?: number;
  /** The audiences a TokenReview asks for (none: the API server's own). */
  readonly audiences?: readonly string[];
  /** Set on the node agent's port: its node's name, and callers are judged as upstream's kubelet judges them. */
  readonly nodeName?: () => string;
}

export interface ScraperAuthOptions {
  /** The API server that judges callers; without it certificates of the CA get in and tokens are refused. */
  readonly apiServer?: ApiServerCheck;
  readonly access?: AccessPolicy;
}

const ANONYMOUS: CallerInfo = { username: "system:anonymous", groups: ["system:unauthenticated"] };
const DEFAULT_TTL_MS = 10_000;
const CACHE_LIMIT = 1000;

const VERBS: Readonly<Record<string, string>> = { GET: "get", HEAD: "get", POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };

/** `path` is `prefix` or below it (upstream's isSubpath). */
const below = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** The attributes upstream's kubelet asks about: nodes/<subresource> of its node (checkpoint since 1.25), the verb from the method. */
export function nodeAgentAttributes(nodeName: string, method: string, path: string): ResourceAttributes {
  const subresource = below(path, "/stats") ? "stats" : below(path, "/metrics") ? "metrics" : below(path, "/logs") ? "log" : below(path, "/checkpoint") ? "checkpoint" : "proxy";
  return { verb: VERBS[method.toUpperCase()] ?? "", group: "", version: "v1", resource: "nodes", subresource, name: nodeName };
}

class TtlCache<T> {
  readonly #entries = new Map<string, { until: number; value: T }>();
  get(key: string): T | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (Date.now() < e.until) return e.value;
    this.#entries.delete(key);
    return undefined;
  }
  set(key: string, value: T, ttlMs: number): void {
    if (ttlMs <= 0) return;
    if (this.#entries.size >= CACHE_LIMIT) this.#entries.clear();
    this.#entries.set(key, { until: Date.now() + ttlMs, value });
  }
}

/** The certificate's user, or undefined when the peer certificate names none (a resumed TLS session may not carry it). */
function certificateCaller(socket: TLSSocket): CallerInfo | undefined {
  const subject = socket.getPeerCertificate?.()?.subject as { CN?: string | string[]; O?: string | string[] } | undefined;
  const cn = Array.isArray(subject?.CN) ? subject.CN[0] : subject?.CN;
  const o = subject?.O;
  if (cn === undefined || cn === "") return undefined;
  return { username: cn, groups: o === undefined ? [] : Array.isArray(o) ? o : [o] };
}

export class ScraperAuth {
  readonly #client: ApiServerCheck | undefined;
  readonly #access: AccessPolicy;
  readonly #tokens = new TtlCache<TokenReviewAnswer>();
  readonly #decisions = new TtlCache<AccessReviewAnswer>();

  constructor(options: ScraperAuthOptions = {}) {
    this.#access = options.access ?? {};
    this.#client = options.apiServer;
  }

  async decide(req: Request, path: string): Promise<AccessDecision> {
    const who = await this.#authenticate(req);
    if ("status" in who) return who;
    if (this.#access.mode === "AlwaysAllow") return { allowed: true, user: who.username };
    // No API server to ask (a standalone node agent): the CA's certificates are trusted as before.
    if (this.#client === undefined) {
      return who === ANONYMOUS ? { allowed: false, status: 403, reason: "Forbidden: no API server to authorize system:anonymous (--kubeconfig)" } : { allowed: true, user: who.username };
    }
    const nodeName = this.#access.nodeName;
    const attributes: AccessAttributes = nodeName
      ? { resourceAttributes: nodeAgentAttributes(nodeName(), req.method ?? "GET", path) }
      : { nonResourceAttributes: { path, verb: VERBS[(req.method ?? "GET").toUpperCase()] ?? "" } };
    const key = JSON.stringify([who.username, who.uid ?? "", [...who.groups].sort(), who.extra ?? {}, attributes]);
    let answer = this.#decisions.get(key);
    if (answer === undefined) {
      try {
        answer = await this.#client.subjectAccessReview(who, attributes);
      } catch (err) {
        // Not cached: the next request asks again.
        return { allowed: false, status: 403, reason: `Forbidden: cannot ask the API server: ${(err as Error).message}` };
      }
      this.#decisions.set(key, answer, answer.allowed ? this.#access.allowedTtlMs ?? DEFAULT_TTL_MS : this.#access.deniedTtlMs ?? DEFAULT_TTL_MS);
    }
    if (answer.allowed) return { allowed: true, user: who.username };
    const r = attributes.resourceAttributes;
    const reason = r
      ? `Forbidden (user=${who.username}, verb=${r.verb}, resource=${r.resource}, subresource=${r.subresource ?? ""})`
      : `forbidden: User "${who.username}" cannot ${attributes.nonResourceAttributes.verb} path "${path}"${answer.reason ? `: ${answer.reason}` : ""}`;
    return { allowed: false, status: 403, reason };
  }

  /** The caller, or the 401 refusing it. */
  async #authenticate(req: Request): Promise<CallerInfo | { allowed: false; status: 401; reason: string }> {
    const socket = req.socket as TLSSocket | undefined;
    const certified = socket?.authorized === true ? certificateCaller(socket) : undefined;
    if (certified !== undefined) return certified;
    const header = req.headers.authorization;
    const token = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : "";
    if (token === "") {
      if (this.#access.anonymous === true) return ANONYMOUS;
      return { allowed: false, status: 401, reason: "Unauthorized" };
    }
    if (this.#access.tokens === false) {
      return { allowed: false, status: 401, reason: "Unauthorized: bearer tokens are not accepted here (authentication.webhook.enabled is false)" };
    }
    if (this.#client === undefined) return { allowed: false, status: 401, reason: "Unauthorized: bearer tokens need --kubeconfig to be checked" };
    const key = createHash("sha256").update(token).digest("hex");
    let answer = this.#tokens.get(key);
    if (answer === undefined) {
      try {
        answer = await this.#client.tokenReview(token, this.#access.audiences);
      } catch (err) {
        return { allowed: false, status: 401, reason: `Unauthorized: cannot check the token with the API server: ${(err as Error).message}` };
      }
      this.#tokens.set(key, answer, this.#access.tokenTtlMs ?? DEFAULT_TTL_MS);
    }
    return answer.authenticated ? answer.user : { allowed: false, status: 401, reason: "Unauthorized" };
  }

  close(): void {
    this.#client?.close();
  }
}
