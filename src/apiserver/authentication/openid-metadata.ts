// Service-account issuer discovery (upstream's ServiceAccountIssuerDiscovery):
// the OIDC discovery document at /.well-known/openid-configuration and the
// verifying keys as a JSON Web Key Set at /openid/v1/jwks, so relying parties
// outside the cluster can check service-account tokens. Both bodies are made
// once (the keys change only across restarts) and served with upstream's
// cache header. As upstream, the endpoints exist only when the issuer is an
// https URL without query or fragment; otherwise start logs why and they 404.
// jwks_uri is --service-account-jwks-uri, or https://<external address>/openid/v1/jwks
// (the advertised address and secure port, known once the listener is up).

import { exportJWK } from "jose";
import type { ServiceAccountKeys } from "./service-account-keys.js";

export const OPENID_CONFIG_PATH = "/.well-known/openid-configuration";
export const JWKS_PATH = "/openid/v1/jwks";
/** Upstream's Cache-Control of both documents (one hour). */
export const OPENID_CACHE_CONTROL = "public, max-age=3600";
export const JWKS_CONTENT_TYPE = "application/jwk-set+json";

export interface OpenIdMetadataOptions {
  /** The first --service-account-issuer (the one tokens carry). */
  readonly issuer: string;
  /** --service-account-jwks-uri ("" or absent: derived from the external address). */
  readonly jwksUri?: string;
  readonly keys: ServiceAccountKeys;
}

export interface OpenIdDocument {
  readonly contentType: string;
  readonly body: Buffer;
}

/** Upstream's check of --service-account-jwks-uri. */
export function checkJwksUri(uri: string): string | undefined {
  if (uri === "") return undefined;
  if (!URL.canParse(uri)) return `service-account-jwks-uri ${JSON.stringify(uri)} is not a valid URL`;
  const u = new URL(uri);
  return u.protocol === "https:" ? undefined : `jwksURI requires https scheme, parsed as: ${uri}`;
}

/** Why the endpoints cannot be served with this issuer (upstream's NewOpenIDMetadata checks), or undefined. */
export function issuerProblem(issuer: string): string | undefined {
  if (issuer === "") return "empty issuer URL";
  // Go parses a bare name as a URL without a scheme.
  if (!URL.canParse(issuer)) return `issuer URL must use https scheme, got: ${issuer}`;
  const u = new URL(issuer);
  if (u.protocol !== "https:") return `issuer URL must use https scheme, got: ${issuer}`;
  if (u.search !== "") return `issuer URL may not include a query, got: ${issuer}`;
  if (u.hash !== "") return `issuer URL may not include a fragment, got: ${issuer}`;
  return undefined;
}

/** The two documents, made on first use (the external address is known only once the server listens). */
export class OpenIdMetadata {
  readonly #o: OpenIdMetadataOptions;
  readonly #externalAddress: () => string | undefined;
  #documents: Promise<{ config: OpenIdDocument; jwks: OpenIdDocument }> | undefined;

  constructor(options: OpenIdMetadataOptions, externalAddress: () => string | undefined) {
    this.#o = options;
    this.#externalAddress = externalAddress;
  }

  /** The document served at `path` (GET), or undefined when the path is not one of them. */
  async document(path: string): Promise<OpenIdDocument | undefined> {
    if (path !== OPENID_CONFIG_PATH && path !== JWKS_PATH) return undefined;
    this.#documents ??= this.#make();
    const docs = await this.#documents;
    return path === OPENID_CONFIG_PATH ? docs.config : docs.jwks;
  }

  async #make(): Promise<{ config: OpenIdDocument; jwks: OpenIdDocument }> {
    const keys = await Promise.all(
      this.#o.keys.verifying.map(async (k) => {
        const jwk = await exportJWK(k.key);
        // The members upstream's go-jose writes: use, kty, kid, (crv,) alg and the public numbers.
        return jwk.kty === "EC"
          ? { use: "sig", kty: "EC", kid: k.kid, crv: jwk.crv, alg: k.alg, x: jwk.x, y: jwk.y }
          : { use: "sig", kty: jwk.kty, kid: k.kid, alg: k.alg, n: jwk.n, e: jwk.e };
      }),
    );
    const config = {
      issuer: this.#o.issuer,
      jwks_uri: this.#jwksUri(),
      response_types_supported: ["id_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
    };
    return {
      config: { contentType: "application/json", body: Buffer.from(JSON.stringify(config)) },
      jwks: { contentType: JWKS_CONTENT_TYPE, body: Buffer.from(JSON.stringify({ keys })) },
    };
  }

  #jwksUri(): string {
    if (this.#o.jwksUri !== undefined && this.#o.jwksUri !== "") return this.#o.jwksUri;
    const address = this.#externalAddress() ?? "";
    return `https://${address}${JWKS_PATH}`;
  }
}

/** Builds the metadata when the issuer allows it; otherwise logs why (as upstream) and returns undefined. */
export function openIdMetadata(options: OpenIdMetadataOptions, externalAddress: () => string | undefined, log: (line: string) => void): OpenIdMetadata | undefined {
  const problem = issuerProblem(options.issuer) ?? (options.jwksUri ? checkJwksUri(options.jwksUri) : undefined);
  if (problem !== undefined) {
    log(`Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery endpoints. Endpoints will not be enabled. Error: ${problem}`);
    return undefined;
  }
  return new OpenIdMetadata(options, externalAddress);
}
