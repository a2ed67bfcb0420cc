// Who may read a component's non-public endpoints (/metrics, /statusz, ...),
// as upstream components decide it: a client certificate signed by the
// cluster CA, or a bearer token the API server vouches for. orch's API server
// has no TokenReview or SubjectAccessReview yet, so a token is checked by
// asking the API server for the same path with it (the question a
// SubjectAccessReview for that non-resource URL would ask); answers are cached
// for 10 s, as upstream caches webhook token reviews.

import type { TLSSocket } from "node:tls";
import type { Request } from "./endpoints.js";

/**
 * The one question a component puts to the API server about a caller: the HTTP status of a GET of
 * `path` with the caller's bearer token ("" for none). The client layer answers it over its REST
 * client (`apiServerCheck` in src/client/); component sits below client, so it only declares it.
 */
export interface ApiServerCheck {
  /** The API server's CA (PEM): the component server's client CA when none is given. */
  readonly ca?: string;
  status(path: string, token: string): Promise<number>;
  /** Called once, when the component server stops. */
  close(): void;
}

export type AccessDecision = { allowed: true; user: string } | { allowed: false; status: 401 | 403; reason: string };

/**
 * Who else gets in, as the node agent's `authentication` and `authorization`
 * settings say (upstream's kubelet: anonymous off, token webhook on, mode
 * Webhook). Client certificates of the cluster CA are always let in.
 */
export interface AccessPolicy {
  /** A request without credentials is system:anonymous instead of a 401 (default false). */
  readonly anonymous?: boolean;
  /** Bearer tokens are checked with the API server (default true). */
  readonly tokens?: boolean;
  /**
   * AlwaysAllow: any authenticated caller (and system:anonymous when allowed);
   * Webhook (default): the API server decides, asked for the same path with the caller's credentials.
   */
  readonly mode?: "AlwaysAllow" | "Webhook";
  /** How long an allowing and a refusing answer are reused (default 10 s each). */
  readonly allowedTtlMs?: number;
  readonly deniedTtlMs?: number;
}

export interface ScraperAuthOptions {
  /** The API server that judges bearer tokens; without it only client certificates work. */
  readonly apiServer?: ApiServerCheck;
  readonly access?: AccessPolicy;
}

/** A path every API server authenticates but any authenticated caller may read: where AlwaysAllow checks a token. */
const AUTHENTICATED_PATH = "/api";

const ANONYMOUS = "system:anonymous";

export class ScraperAuth {
  readonly #client: ApiServerCheck | undefined;
  readonly #access: AccessPolicy;
  readonly #cache = new Map<string, { at: number; decision: AccessDecision }>();

  constructor(options: ScraperAuthOptions = {}) {
    this.#access = options.access ?? {};
    this.#client = options.apiServer;
  }

  async decide(req: Request, path: string): Promise<AccessDecision> {
    const socket = req.socket as TLSSocket | undefined;
    if (socket?.authorized === true) {
      const cn = socket.getPeerCertificate?.()?.subject?.CN;
      return { allowed: true, user: typeof cn === "string" ? cn : "client-certificate" };
    }
    const header = req.headers.authorization;
    const token = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : "";
    const alwaysAllow = this.#access.mode === "AlwaysAllow";
    if (token === "") {
      if (this.#access.anonymous !== true) return { allowed: false, status: 401, reason: "Unauthorized" };
      if (alwaysAllow) return { allowed: true, user: ANONYMOUS };
    } else if (this.#access.tokens === false) {
      return { allowed: false, status: 401, reason: "Unauthorized: bearer tokens are not accepted here (authentication.webhook.enabled is false)" };
    }
    if (this.#client === undefined) return { allowed: false, status: 401, reason: "Unauthorized: bearer tokens need --kubeconfig to be checked" };
    // AlwaysAllow only needs the token authenticated; Webhook asks about the path itself.
    const asked = alwaysAllow ? AUTHENTICATED_PATH : path;
    const key = `${asked}\u0000${token}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined && Date.now() - cached.at < (cached.decision.allowed ? this.#access.allowedTtlMs ?? 10_000 : this.#access.deniedTtlMs ?? 10_000)) return cached.decision;
    const decision = await this.#ask(token, asked);
    if (this.#cache.size > 1000) this.#cache.clear();
    this.#cache.set(key, { at: Date.now(), decision });
    return decision;
  }

  async #ask(token: string, path: string): Promise<AccessDecision> {
    try {
      const status = await this.#client!.status(path, token);
      // The anonymous caller is refused with a 403: it is known (anonymous is on), just not allowed.
      if (token === "" && (status === 401 || status === 403)) return { allowed: false, status: 403, reason: `Forbidden: ${ANONYMOUS} may not GET ${path}` };
      if (status === 401) return { allowed: false, status: 401, reason: "Unauthorized" };
      if (status === 403) return { allowed: false, status: 403, reason: `Forbidden: the API server does not allow GET ${path} with this token` };
      // Any other answer (even 404: the API server may not serve that path) means the token authenticated and was not refused.
      return { allowed: true, user: token === "" ? ANONYMOUS : "bearer-token" };
    } catch (err) {
      return { allowed: false, status: 401, reason: `Unauthorized: cannot check the token with the API server: ${(err as Error).message}` };
    }
  }

  close(): void {
    this.#client?.close();
  }
}
