// Authentication: who sent the request. Each Authenticator knows one kind of
// credential and answers the user it proves, or undefined when the request
// carries none it knows; the first one that answers wins. A request nobody
// vouches for is a 401, except on the public paths (health, /version), which
// pass as system:anonymous (unless --anonymous-auth=false). The credentials:
// bearer tokens (the admin token, --token-auth-file: token-file.ts) and
// client certificates signed by the cluster CA (client-certificates.ts);
// service-account tokens and node credentials (issue 14) are further
// Authenticators in the list.

import { isPublicPath } from "../../component/index.js";
import { digestsEqual, secretDigest, unauthorized } from "../../machinery/index.js";
import type { Incoming } from "../http/respond.js";
import type { Filter, UserInfo } from "./context.js";

export interface Authenticator {
  /** The user the request's credential proves, or undefined when it has no credential of this kind (or a wrong one). */
  authenticate(req: Incoming): UserInfo | undefined | Promise<UserInfo | undefined>;
}

/** Upstream's identity of requests without credentials. */
export const ANONYMOUS: UserInfo = Object.freeze({ name: "system:anonymous", groups: Object.freeze(["system:unauthenticated"]) });

/** Who the admin token (admin.kubeconfig) stands for: upstream's cluster-admin group. */
export const ADMIN: UserInfo = Object.freeze({ name: "admin", groups: Object.freeze(["system:masters", "system:authenticated"]) });

/**
 * Bearer tokens from a fixed table (the admin token today; `--token-auth-file`
 * fills one from its CSV). The header must read exactly `Bearer <token>`, as
 * the server has always required.
 */
export class TokenAuthenticator implements Authenticator {
  /** Digests, not tokens: every entry is compared in constant time, with no early exit (machinery/secret-equal.ts). */
  readonly #users: readonly { digest: Buffer; user: UserInfo }[];

  constructor(users: ReadonlyMap<string, UserInfo>) {
    this.#users = [...users].map(([token, user]) => ({ digest: secretDigest(token), user }));
  }

  authenticate(req: Incoming): UserInfo | undefined {
    const header = req.headers.authorization;
    if (typeof header !== "string" || !header.startsWith("Bearer ")) return undefined;
    const given = secretDigest(header.slice(7));
    let found: UserInfo | undefined;
    for (const { digest, user } of this.#users) if (digestsEqual(given, digest)) found ??= user;
    return found;
  }
}

export interface AuthenticationOptions {
  /** Tried in order; the first user found is the request's. */
  readonly authenticators: readonly Authenticator[];
  /**
   * `--anonymous-auth` (default true): a request without credentials passes as
   * system:anonymous on the public paths (health, /version) and is a 401
   * elsewhere; false makes it a 401 everywhere (upstream's setting).
   */
  readonly anonymous?: boolean;
}

export function authenticationFilter({ authenticators, anonymous = true }: AuthenticationOptions): Filter {
  return async (ctx, next) => {
    let user: UserInfo | undefined;
    for (const a of authenticators) {
      user = await a.authenticate(ctx.req);
      if (user !== undefined) break;
    }
    if (user === undefined) {
      if (!anonymous || !isPublicPath(ctx.url.pathname)) throw unauthorized("Unauthorized");
      user = ANONYMOUS;
    }
    ctx.user = user;
    return next();
  };
}
