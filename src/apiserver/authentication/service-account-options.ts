// The service-account options of the API server (--service-account-*,
// --api-audiences), their defaults and checks, and what they build: the keys
// and the token issuer and verifier (service-account-tokens.ts).

import { serviceAccountNames } from "../../api/authentication/token-request.js";
import type { Naming } from "../../machinery/naming.js";
import { loadServiceAccountKeys } from "./service-account-keys.js";
import { ServiceAccountTokens, type AccountObjects } from "./service-account-tokens.js";

/**
 * The issuer when none is given: the in-cluster name of the API server's
 * service (`kubernetes` in `default` on both profiles), as kubeadm sets it.
 */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";

export interface ServiceAccountOptions {
  /** --service-account-signing-key-file (default: sa.key in the data folder, made at first start). */
  readonly signingKeyFile?: string;
  /** --service-account-key-file: more keys that verify. */
  readonly keyFiles?: readonly string[];
  /** --service-account-issuer (default DEFAULT_SERVICE_ACCOUNT_ISSUER). */
  readonly issuers?: readonly string[];
  /** --service-account-jwks-uri (default: https://<advertised address>:<port>/openid/v1/jwks; openid-metadata.ts). */
  readonly jwksUri?: string;
  /** --api-audiences (default: the issuers). */
  readonly apiAudiences?: readonly string[];
  /** --service-account-max-token-expiration in seconds (0: none). */
  readonly maxExpirationSeconds?: number;
  /** --service-account-extend-token-expiration (default true): projected-volume tokens bound to a pod are signed for a year, with `warnafter` at the hour asked. */
  readonly extendExpiration?: boolean;
  /**
   * The ServiceAccount admission step (default false here; `orch apiserver`
   * and `orch server` turn it on, as upstream enables it by default): in-process
   * test servers run without the controller that makes `default` accounts.
   */
  readonly admission?: boolean;
}

/** Upstream's checks of --service-account-issuer. */
export function checkIssuers(issuers: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const issuer of issuers) {
    if (issuer === "") return "service-account-issuer should not be an empty string";
    if (issuer.includes(":") && !URL.canParse(issuer)) return `service-account-issuer ${JSON.stringify(issuer)} contained a ':' but was not a valid URL`;
    if (seen.has(issuer)) return `service-account-issuer ${JSON.stringify(issuer)} is already specified`;
    seen.add(issuer);
  }
  return issuers.length === 0 ? "service-account-issuer is a required flag" : undefined;
}

/** Loads the keys (making the default one at first start) and builds the tokens' issuer and verifier. */
export function serviceAccountTokens(options: ServiceAccountOptions, o: { dataDir: string; naming: Naming; objects: AccountObjects }): ServiceAccountTokens {
  const issuers = options.issuers !== undefined && options.issuers.length > 0 ? options.issuers : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  const problem = checkIssuers(issuers);
  if (problem !== undefined) throw new Error(`--service-account-issuer: ${problem}`);
  const keys = loadServiceAccountKeys({
    dataDir: o.dataDir,
    ...(options.signingKeyFile !== undefined ? { signingKeyFile: options.signingKeyFile } : {}),
    ...(options.keyFiles !== undefined ? { keyFiles: options.keyFiles } : {}),
  });
  return new ServiceAccountTokens({
    keys,
    issuers,
    apiAudiences: options.apiAudiences !== undefined && options.apiAudiences.length > 0 ? options.apiAudiences : issuers,
    maxExpirationSeconds: options.maxExpirationSeconds ?? 0,
    extendExpiration: options.extendExpiration ?? true,
    names: serviceAccountNames(o.naming),
    objects: o.objects,
  });
}

/** The admission plugins `--enable-admission-plugins` and `--disable-admission-plugins` may name (the others always run). */
export const OPTIONAL_ADMISSION_PLUGINS: readonly string[] = ["ServiceAccount"];

export function checkOptionalAdmissionPlugins(names: readonly string[]): string | undefined {
  const unknown = names.filter((n) => !OPTIONAL_ADMISSION_PLUGINS.includes(n));
  return unknown.length === 0 ? undefined : `unknown admission plugins: ${unknown.join(", ")} (orch can turn on or off: ${OPTIONAL_ADMISSION_PLUGINS.join(", ")})`;
}
