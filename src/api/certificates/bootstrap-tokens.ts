// Bootstrap tokens (upstream's bootstrap.kubernetes.io/token Secrets under
// the naming table's key domain): `<id>.<secret>` (6 and 16 characters of
// [a-z0-9]), kept in a Secret named `bootstrap-token-<id>` in the system
// namespace with the data keys token-id, token-secret, expiration (RFC 3339),
// usage-bootstrap-authentication, usage-bootstrap-signing, auth-extra-groups
// and description. The authenticator (API server), the cleaner (controller
// manager) and `orch server` (which makes the join token's) read this file.

import { randomInt } from "node:crypto";
import type { Naming } from "../../machinery/naming.js";
import { secretEqual } from "../../machinery/secret-equal.js";
import { BOOTSTRAPPERS_GROUP } from "./signers.js";

export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** The Secret fields of a bootstrap token (upstream's bootstrapapi constants). */
export const BOOTSTRAP_KEYS = {
  id: "token-id",
  secret: "token-secret",
  expiration: "expiration",
  description: "description",
  usageAuthentication: "usage-bootstrap-authentication",
  usageSigning: "usage-bootstrap-signing",
  extraGroups: "auth-extra-groups",
} as const;

export const BOOTSTRAP_SECRET_PREFIX = "bootstrap-token-";

/** The Secret type: bootstrap.<key domain>/token (upstream bootstrap.kubernetes.io/token). */
export function bootstrapTokenType(naming: Naming): string {
  return `bootstrap.${naming.keyDomain}/token`;
}

/** The user a bootstrap token authenticates as. */
export function bootstrapUser(id: string): string {
  return `system:bootstrap:${id}`;
}

/** A fresh random token, `<id>.<secret>`. */
export function generateBootstrapToken(): string {
  const pick = (n: number) => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
  return `${pick(6)}.${pick(16)}`;
}

interface SecretLike {
  type?: string | null;
  metadata: { name?: string; deletionTimestamp?: string | null };
  data?: Record<string, string> | null;
}

/** The Secret holding `token` for authentication, valid `ttlMs` from `now` (0: no expiration). */
export function bootstrapTokenSecret(naming: Naming, token: string, options: { now: Date; ttlMs: number; description: string; extraGroups?: readonly string[] }) {
  const m = BOOTSTRAP_TOKEN_PATTERN.exec(token);
  if (m === null) throw new Error("a bootstrap token is <6 characters [a-z0-9]>.<16 characters [a-z0-9]>");
  const b64 = (v: string) => Buffer.from(v).toString("base64");
  const data: Record<string, string> = {
    [BOOTSTRAP_KEYS.id]: b64(m[1]!),
    [BOOTSTRAP_KEYS.secret]: b64(m[2]!),
    [BOOTSTRAP_KEYS.usageAuthentication]: b64("true"),
    [BOOTSTRAP_KEYS.description]: b64(options.description),
  };
  if (options.ttlMs > 0) data[BOOTSTRAP_KEYS.expiration] = b64(new Date(options.now.getTime() + options.ttlMs).toISOString().replace(/\.\d{3}Z$/, "Z"));
  if ((options.extraGroups ?? []).length > 0) data[BOOTSTRAP_KEYS.extraGroups] = b64(options.extraGroups!.join(","));
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${BOOTSTRAP_SECRET_PREFIX}${m[1]}`, namespace: naming.systemNamespace },
    type: bootstrapTokenType(naming),
    data,
  };
}

function field(secret: SecretLike, key: string): string | undefined {
  const v = secret.data?.[key];
  return typeof v === "string" ? Buffer.from(v, "base64").toString("utf8") : undefined;
}

/** When the token's Secret expires (ms), undefined when it never does, NaN when the field is malformed. */
export function bootstrapTokenExpiry(secret: SecretLike): number | undefined {
  const text = field(secret, BOOTSTRAP_KEYS.expiration);
  return text === undefined ? undefined : Date.parse(text);
}

/**
 * The user `token` proves against its Secret (upstream's bootstrap token
 * authenticator), or undefined: wrong type, being deleted, a different
 * secret, expired (or an unreadable expiration), not for authentication, or
 * malformed extra groups.
 */
export function authenticateBootstrapToken(naming: Naming, token: string, secret: SecretLike | undefined, now: number): { name: string; groups: string[] } | undefined {
  const m = BOOTSTRAP_TOKEN_PATTERN.exec(token);
  if (m === null || secret === undefined) return undefined;
  if (secret.type !== bootstrapTokenType(naming) || secret.metadata.deletionTimestamp) return undefined;
  if (!secretEqual(m[2]!, field(secret, BOOTSTRAP_KEYS.secret) ?? "")) return undefined;
  if (field(secret, BOOTSTRAP_KEYS.id) !== m[1]) return undefined;
  const expiry = bootstrapTokenExpiry(secret);
  if (expiry !== undefined && !(expiry > now)) return undefined;
  if (field(secret, BOOTSTRAP_KEYS.usageAuthentication) !== "true") return undefined;
  const extra = (field(secret, BOOTSTRAP_KEYS.extraGroups) ?? "").split(",").map((g) => g.trim()).filter((g) => g !== "");
  if (extra.some((g) => !EXTRA_GROUP_PATTERN.test(g))) return undefined;
  return { name: bootstrapUser(m[1]!), groups: [BOOTSTRAPPERS_GROUP, ...extra] };
}
