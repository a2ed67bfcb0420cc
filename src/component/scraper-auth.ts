// Who may read a component's non-public endpoints (/metrics, /statusz, ...),
// as upstream components decide it: a client certificate signed by the
// cluster CA, or a bearer token the API server vouches for. orch's API server
// has no TokenReview or SubjectAccessReview yet, so a token is checked by
// asking the API server for the same path with it (the question a
// SubjectAccessReview for that non-resource URL would ask); answers are cached
// for 10 s, as upstream caches webhook token reviews.

import type { TLSSocket } from "node:tls";
import type { ClientConfig } from "../client/kubeconfig.js";
import { RestClient } from "../client/rest.js";
import type { Request } from "./endpoints.js";

export type AccessDecision = { allowed: true; user: string } | { allowed: false; status: 401 | 403; reason: string };

export interface ScraperAuthOptions {
  /** The API server that judges bearer tokens; without it only client certificates work. */
  readonly apiServer?: ClientConfig;
  /** How long an answer about a token is reused (default 10 s). */
  readonly cacheTtlMs?: number;
}

export class ScraperAuth {
  readonly #client: RestClient | undefined;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { at: number; decision: AccessDecision }>();

  constructor(options: ScraperAuthOptions = {}) {
    this.#ttlMs = options.cacheTtlMs ?? 10_000;
    if (options.apiServer !== undefined) {
      // Our own credentials must not mix with the token being checked.
      const { token: _t, cert: _c, key: _k, ...server } = options.apiServer;
      this.#client = new RestClient(server, { userAgent: "orch-component-authn", requestTimeoutMs: 10_000 });
    }
  }

  async decide(req: Request, path: string): Promise<AccessDecision> {
    const socket = req.socket as TLSSocket | undefined;
    if (socket?.authorized === true) {
      const cn = socket.getPeerCertificate?.()?.subject?.CN;
      return { allowed: true, user: typeof cn === "string" ? cn : "client-certificate" };
    }
    const header = req.headers.authorization;
    const token = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : "";
    if (token === "") return { allowed: false, status: 401, reason: "Unauthorized" };
    if (this.#client === undefined) return { allowed: false, status: 401, reason: "Unauthorized: bearer tokens need --kubeconfig to be checked" };
    const key = `${path}\u0000${token}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined && Date.now() - cached.at < this.#ttlMs) return cached.decision;
    const decision = await this.#ask(token, path);
    if (this.#cache.size > 1000) this.#cache.clear();
    this.#cache.set(key, { at: Date.now(), decision });
    return decision;
  }

  async #ask(token: string, path: string): Promise<AccessDecision> {
    try {
      const res = await this.#client!.request({ method: "GET", path, headers: { authorization: `Bearer ${token}` } });
      if (res.status === 401) return { allowed: false, status: 401, reason: "Unauthorized" };
      if (res.status === 403) return { allowed: false, status: 403, reason: `Forbidden: the API server does not allow GET ${path} with this token` };
      // Any other answer (even 404: the API server may not serve that path) means the token authenticated and was not refused.
      return { allowed: true, user: "bearer-token" };
    } catch (err) {
      return { allowed: false, status: 401, reason: `Unauthorized: cannot check the token with the API server: ${(err as Error).message}` };
    }
  }

  close(): void {
    this.#client?.close();
  }
}
