// Bootstrap tokens (upstream's bootstrap token authenticator): a bearer
// token `<id>.<secret>` is checked against the Secret bootstrap-token-<id>
// of the system namespace (api/certificates/bootstrap-tokens.ts decides):
// user system:bootstrap:<id> in system:bootstrappers (and the token's extra
// groups). Expired, deleted or mismatched tokens prove nothing (a 401 when
// no other credential does). The Secret is read from the watch cache.

import { authenticateBootstrapToken, BOOTSTRAP_SECRET_PREFIX, BOOTSTRAP_TOKEN_PATTERN } from "../../api/certificates/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { Incoming } from "../http/respond.js";
import type { Authenticator } from "./authentication.js";
import type { UserInfo } from "./context.js";

/** A Secret of the system namespace by name, or undefined. */
export type SystemSecretLookup = (name: string) => Promise<{ type?: string | null; metadata: { name?: string; deletionTimestamp?: string | null }; data?: Record<string, string> | null } | undefined>;

export function bootstrapTokenAuthenticator(naming: Naming, lookup: SystemSecretLookup, now: () => number = Date.now): Authenticator {
  return {
    async authenticate(req: Incoming): Promise<UserInfo | undefined> {
      const header = req.headers.authorization;
      if (typeof header !== "string" || !header.startsWith("Bearer ")) return undefined;
      const token = header.slice(7);
      const m = BOOTSTRAP_TOKEN_PATTERN.exec(token);
      if (m === null) return undefined;
      const user = authenticateBootstrapToken(naming, token, await lookup(`${BOOTSTRAP_SECRET_PREFIX}${m[1]}`), now());
      return user === undefined ? undefined : { name: user.name, groups: [...user.groups, "system:authenticated"] };
    },
  };
}
