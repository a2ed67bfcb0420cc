// Service-account tokens: JWTs the API server signs (TokenRequest) and
// accepts as bearer tokens, as upstream's (pkg/serviceaccount): iss, sub
// `system:serviceaccount:NS:NAME`, aud, exp, iat, nbf, and a private claim
// under the naming table's key domain ("kubernetes.io" upstream) with the
// namespace, the account {name, uid} and the bound pod or secret {name, uid}.
// A token proves its account while its signature verifies with one of the
// keys, its issuer is one of --service-account-issuer, one of its audiences is
// one asked for (--api-audiences for requests), it has not expired (one
// minute's leeway, as upstream's jwt library), and the account and bound
// object still exist with the uids it names (read from the watch caches,
// with one fresh read on a miss). Signing and verifying are jose's.

import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { serviceAccountUser, type ServiceAccountNames } from "../../api/authentication/token-request.js";
import type { ApiObject } from "../../machinery/index.js";
import type { UserInfo } from "../filters/index.js";
import type { Incoming } from "../http/respond.js";
import { addAuditAnnotation } from "../audit/index.js";
import type { Authenticator } from "../filters/index.js";
import type { ServiceAccountKeys, VerifyingKey } from "./service-account-keys.js";

/** The resources a token names. */
export type AccountResource = "serviceaccounts" | "pods" | "secrets";

/**
 * How tokens find the objects they name. `cached`: the watch cache as it
 * stands, with a fresh read when it lacks the object (a pod made a moment
 * ago); `fresh`: a consistent read (TokenRequest). Undefined when missing.
 */
export interface AccountObjects {
  get(resource: AccountResource, namespace: string, name: string, read: "cached" | "fresh"): Promise<ApiObject | undefined>;
}

export interface ServiceAccountTokenOptions {
  readonly keys: ServiceAccountKeys;
  /** --service-account-issuer: the first is written into new tokens; all are accepted. */
  readonly issuers: readonly string[];
  /** --api-audiences: what a request's token must be meant for; a TokenRequest without audiences gets these. */
  readonly apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds (0: no limit): longer requests are cut to it. */
  readonly maxExpirationSeconds: number;
  readonly names: ServiceAccountNames;
  readonly objects: AccountObjects;
  /** --service-account-extend-token-expiration (default true): pod-bound projected-volume requests get EXTENDED_TOKEN_SECONDS. */
  readonly extendExpiration?: boolean;
  /** The clock in ms (tests); default Date.now. */
  readonly now?: () => number;
}

/** What a token is issued for (upstream's token.Claims arguments). */
export interface TokenClaims {
  readonly namespace: string;
  readonly serviceAccount: { readonly name: string; readonly uid: string };
  readonly pod?: { readonly name: string; readonly uid: string };
  readonly secret?: { readonly name: string; readonly uid: string };
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  /** An extended token: seconds after issue past which its use is audited as stale (the private claim's `warnafter`). */
  readonly warnAfterSeconds?: number;
}

/** A review's outcome: the user and the audiences it was accepted for, or why not. */
export type TokenCheck = { readonly user: UserInfo; readonly audiences: readonly string[]; readonly stale?: string } | { readonly error: string };

interface PrivateClaim {
  namespace?: string;
  serviceaccount?: { name?: string; uid?: string };
  pod?: { name?: string; uid?: string };
  secret?: { name?: string; uid?: string };
  /** NumericDate: an extended token is used past what was asked for after this (upstream's claim). */
  warnafter?: number;
}

/** One minute, upstream's jwt.DefaultLeeway. */
const LEEWAY_SECONDS = 60;

/**
 * How long a verified signature is remembered (upstream caches a token's
 * whole authentication for 10 s, --authentication-token-success-cache-ttl's
 * default; here only the signature and time checks are, the account and
 * bound-object checks still run on every request), and for how many tokens.
 */
const VERIFIED_TTL_MS = 10_000;
const VERIFIED_MAX = 4096;

export class ServiceAccountTokens {
  readonly #o: ServiceAccountTokenOptions;
  /** Tokens whose signature verified, by token and audiences: the payload and until when (ms) it may be reused. */
  readonly #verified = new Map<string, { payload: JWTPayload; until: number }>();

  constructor(options: ServiceAccountTokenOptions) {
    if (options.issuers.length === 0) throw new Error("--service-account-issuer: at least one issuer is required");
    this.#o = options;
  }

  get apiAudiences(): readonly string[] {
    return this.#o.apiAudiences;
  }

  get maxExpirationSeconds(): number {
    return this.#o.maxExpirationSeconds;
  }

  get extendExpiration(): boolean {
    return this.#o.extendExpiration ?? true;
  }

  get objects(): AccountObjects {
    return this.#o.objects;
  }

  /** The issuer tokens carry (the first --service-account-issuer) and the keys (issuer discovery publishes the verifying ones). */
  get issuer(): string {
    return this.#o.issuers[0]!;
  }

  get keys(): ServiceAccountKeys {
    return this.#o.keys;
  }

  /** Signs a token; `issuedAt` is the second it counts from (the caller reports expiry from the same clock). */
  async issue(claims: TokenClaims, issuedAtSeconds = Math.floor(this.#now() / 1000)): Promise<string> {
    const { signing } = this.#o.keys;
    const ref = (r: { name: string; uid: string } | undefined) => (r === undefined ? {} : { name: r.name, uid: r.uid });
    const privateClaim: PrivateClaim = {
      namespace: claims.namespace,
      serviceaccount: ref(claims.serviceAccount),
      ...(claims.pod !== undefined ? { pod: ref(claims.pod) } : claims.secret !== undefined ? { secret: ref(claims.secret) } : {}),
      ...(claims.warnAfterSeconds !== undefined && claims.warnAfterSeconds !== 0 ? { warnafter: issuedAtSeconds + claims.warnAfterSeconds } : {}),
    };
    return new SignJWT({ [this.#o.names.claim]: privateClaim } as JWTPayload)
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .setIssuer(this.#o.issuers[0]!)
      .setSubject(serviceAccountUser(claims.namespace, claims.serviceAccount.name).name)
      .setAudience([...claims.audiences])
      .setIssuedAt(issuedAtSeconds)
      .setNotBefore(issuedAtSeconds)
      .setExpirationTime(issuedAtSeconds + claims.expirationSeconds)
      .sign(signing.privateKey);
  }

  /**
   * Checks `token` for `audiences` (default the API audiences). Undefined
   * when it is not one of ours (not a JWT, or another issuer's), so other
   * authenticators may know it; an error when it is ours but not valid.
   */
  async check(token: string, audiences: readonly string[] = this.#o.apiAudiences): Promise<TokenCheck | undefined> {
    if (token.split(".").length !== 3) return undefined;
    let payload: JWTPayload;
    try {
      payload = await this.#verify(token, audiences);
    } catch (err) {
      if (err instanceof NotOurs) return undefined;
      return { error: jwtError(err, audiences, token) };
    }
    const accepted = audiences.filter((a) => audienceOf(payload).includes(a));
    const claim = payload[this.#o.names.claim] as PrivateClaim | undefined;
    if (claim === undefined || typeof claim !== "object" || typeof claim.namespace !== "string" || typeof claim.serviceaccount?.name !== "string") {
      return { error: "service account token claims could not be validated: the private claim is missing" };
    }
    const namespace = claim.namespace;
    const account = await this.#o.objects.get("serviceaccounts", namespace, claim.serviceaccount.name, "cached");
    if (account === undefined) return { error: `serviceaccounts "${claim.serviceaccount.name}" not found` };
    if (deletedForAMinute(account, this.#now())) return { error: `service account ${namespace}/${claim.serviceaccount.name} has been deleted` };
    if (account.metadata.uid !== claim.serviceaccount.uid) return { error: `service account UID (${account.metadata.uid}) does not match claim (${claim.serviceaccount.uid})` };
    for (const [resource, ref] of [["secrets", claim.secret], ["pods", claim.pod]] as const) {
      if (ref === undefined) continue;
      const bound = await this.#o.objects.get(resource, namespace, ref.name ?? "", "cached");
      if (bound === undefined || deletedForAMinute(bound, this.#now())) return { error: "service account token has been invalidated" };
      if (bound.metadata.uid !== ref.uid) {
        return { error: `${resource === "pods" ? "pod" : "secret"} UID (${bound.metadata.uid}) does not match service account ${resource === "pods" ? "pod" : "secret"} ref claim (${ref.uid})` };
      }
    }
    const sa = serviceAccountUser(namespace, claim.serviceaccount.name);
    const extra = claim.pod !== undefined ? { [this.#o.names.podNameExtra]: [claim.pod.name ?? ""], [this.#o.names.podUidExtra]: [claim.pod.uid ?? ""] } : undefined;
    const user: UserInfo = {
      name: sa.name,
      uid: account.metadata.uid ?? "",
      groups: [...sa.groups, "system:authenticated"],
      ...(extra !== undefined ? { extra } : {}),
    };
    // Upstream's safe transition: an extended token used past what its pod asked for is valid, and audited as stale.
    const nowSeconds = Math.floor(this.#now() / 1000);
    const stale = typeof claim.warnafter === "number" && nowSeconds > claim.warnafter
      ? `subject: ${sa.name}, seconds after warning threshold: ${nowSeconds - claim.warnafter}` : undefined;
    return { user, audiences: accepted, ...(stale !== undefined ? { stale } : {}) };
  }

  /** The bearer-token authenticator of the filter chain. */
  authenticator(): Authenticator {
    return {
      authenticate: async (req: Incoming) => {
        const header = req.headers.authorization;
        if (typeof header !== "string" || !header.startsWith("Bearer ")) return undefined;
        const result = await this.check(header.slice(7));
        if (result === undefined || !("user" in result)) return undefined;
        if (result.stale !== undefined) addAuditAnnotation(req, this.#o.names.staleTokenAnnotation, result.stale);
        return result.user;
      },
    };
  }

  /**
   * #verifyUncached, remembered for VERIFIED_TTL_MS (never past the token's
   * expiry and leeway): every request of a client carries the same token, and
   * an ECDSA or RSA verification per request was a visible share of the API
   * server's CPU under load (bench/density). Failures are not remembered.
   */
  async #verify(token: string, audiences: readonly string[]): Promise<JWTPayload> {
    const key = `${audiences.join("\n")}\n\n${token}`;
    const now = this.#now();
    const hit = this.#verified.get(key);
    if (hit !== undefined) {
      if (now < hit.until) return hit.payload;
      this.#verified.delete(key);
    }
    const payload = await this.#verifyUncached(token, audiences);
    const expiry = typeof payload.exp === "number" ? (payload.exp + LEEWAY_SECONDS) * 1000 : now;
    const until = Math.min(now + VERIFIED_TTL_MS, expiry);
    if (until > now) {
      if (this.#verified.size >= VERIFIED_MAX) this.#verified.delete(this.#verified.keys().next().value!);
      this.#verified.set(key, { payload, until });
    }
    return payload;
  }

  async #verifyUncached(token: string, audiences: readonly string[]): Promise<JWTPayload> {
    let header: { alg?: string; kid?: string };
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new NotOurs();
    }
    let claims: JWTPayload;
    try {
      claims = decodeJwt(token);
    } catch {
      throw new NotOurs();
    }
    // Another issuer's token (an OIDC provider's) is not ours to refuse.
    if (typeof claims.iss !== "string" || !this.#o.issuers.includes(claims.iss)) throw new NotOurs();
    const candidates = this.#o.keys.verifying.filter((k) => header.kid === undefined || k.kid === header.kid);
    let last: unknown = new Error("no key matches the token's key id");
    for (const key of candidates) {
      try {
        const { payload } = await jwtVerify(token, key.key, this.#options(key, audiences));
        return payload;
      } catch (err) {
        last = err;
        if (!(err instanceof joseErrors.JWSSignatureVerificationFailed) && !(err instanceof joseErrors.JOSEAlgNotAllowed)) throw err;
      }
    }
    throw last;
  }

  #options(key: VerifyingKey, audiences: readonly string[]) {
    return {
      algorithms: [key.alg],
      issuer: [...this.#o.issuers],
      audience: [...audiences],
      clockTolerance: LEEWAY_SECONDS,
      currentDate: new Date(this.#now()),
      requiredClaims: ["exp", "sub"],
    };
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now();
  }
}

class NotOurs extends Error {}

function audienceOf(payload: JWTPayload): string[] {
  return typeof payload.aud === "string" ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
}

/** Upstream treats an object deleted more than the leeway ago as gone. */
function deletedForAMinute(obj: ApiObject, nowMs: number): boolean {
  const at = obj.metadata.deletionTimestamp;
  return typeof at === "string" && Date.parse(at) < nowMs - LEEWAY_SECONDS * 1000;
}

/** Upstream's wording where it has one (claims.go, jwt.go). */
function jwtError(err: unknown, audiences: readonly string[], token: string): string {
  if (err instanceof joseErrors.JWTExpired) return "service account token has expired";
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === "nbf") return "service account token is not valid yet";
    if (err.claim === "aud") return `token audiences ${JSON.stringify(audienceOf(decodeJwt(token)))} is invalid for the target audiences ${JSON.stringify(audiences)}`;
    return `service account token claims could not be validated: ${err.message}`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return "invalid signature";
  return err instanceof Error ? err.message : String(err);
}
