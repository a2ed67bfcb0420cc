// Service-account tokens for projected volumes (upstream's kubelet token
// manager): one TokenRequest per (namespace, account, audience, lifetime,
// pod), bound to the pod, kept and handed out again until it needs renewing:
// past 80 % of its life, or older than 24 hours, as upstream. A token that
// cannot be renewed is handed out while it is still valid (the next sync
// tries again); expired entries are dropped.

/** What the agent asks the API server (serviceaccounts/NAME/token). */
export interface TokenRequestSpec {
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  readonly boundPod: { readonly name: string; readonly uid: string };
}

/** The answer: the token and when it expires (ms since the epoch), and the lifetime the server granted. */
export interface IssuedToken {
  readonly token: string;
  readonly expiresAtMs: number;
  readonly expirationSeconds: number;
}

export type RequestToken = (namespace: string, serviceAccount: string, spec: TokenRequestSpec) => Promise<IssuedToken>;

const MAX_AGE_MS = 24 * 60 * 60 * 1000;

export class TokenManager {
  readonly #request: RequestToken;
  readonly #now: () => number;
  readonly #cache = new Map<string, IssuedToken>();

  constructor(request: RequestToken, now: () => number = Date.now) {
    this.#request = request;
    this.#now = now;
  }

  /** The pod's token for this projection: the kept one while it is fresh, else a new one. */
  async token(namespace: string, serviceAccount: string, spec: TokenRequestSpec): Promise<string> {
    const now = this.#now();
    this.#dropExpired(now);
    const key = JSON.stringify([namespace, serviceAccount, [...spec.audiences], spec.expirationSeconds, spec.boundPod.name, spec.boundPod.uid]);
    const kept = this.#cache.get(key);
    if (kept !== undefined && !needsRenewal(kept, now)) return kept.token;
    try {
      const issued = await this.#request(namespace, serviceAccount, spec);
      this.#cache.set(key, issued);
      return issued.token;
    } catch (err) {
      if (kept !== undefined && kept.expiresAtMs > now) return kept.token;
      throw err;
    }
  }

  #dropExpired(now: number): void {
    for (const [key, t] of this.#cache) if (t.expiresAtMs <= now) this.#cache.delete(key);
  }
}

/** Upstream's requiresRefresh: older than 24 h, or within the last 20 % of its life. */
export function needsRenewal(t: IssuedToken, now: number): boolean {
  const lifeMs = t.expirationSeconds * 1000;
  const issuedAt = t.expiresAtMs - lifeMs;
  return now > issuedAt + MAX_AGE_MS || now > t.expiresAtMs - lifeMs / 5;
}
