// TokenRequest (authentication.<suffix>/v1): the body of a POST to
// serviceaccounts/NAME/token, which asks the API server for a signed
// service-account token (a JWT) with audiences, a lifetime and, optionally,
// an object (a Pod or a Secret) it dies with. Never stored: the answer is the
// request with status.token filled in. Also here: the product-derived names
// a service account's token travels under (the JWT's private claim, the
// projected volume, its mount path, the CA configmap), through the naming table.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import type { FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";

export const TOKEN_REQUEST_KIND = "TokenRequest";
export const AUTHENTICATION_V1 = "io.k8s.api.authentication.v1";
export const TOKEN_REQUEST_TYPE = `${AUTHENTICATION_V1}.TokenRequest`;

/** The account a pod without serviceAccountName runs as, which every namespace has. */
export const DEFAULT_SERVICE_ACCOUNT = "default";

/** Upstream's bounds on spec.expirationSeconds (ValidateTokenRequest). */
export const MIN_TOKEN_SECONDS = 600;
export const MAX_TOKEN_SECONDS = 2 ** 32;
/** What a TokenRequest without expirationSeconds gets (upstream's default, one hour). */
export const DEFAULT_TOKEN_SECONDS = 3600;
/** The projected token's lifetime the ServiceAccount admission step asks for (upstream's WarnOnlyBoundTokenExpirationSeconds). */
export const PROJECTED_TOKEN_SECONDS = 60 * 60 + 7;
/**
 * --service-account-extend-token-expiration: a pod-bound TokenRequest for
 * exactly PROJECTED_TOKEN_SECONDS is signed for a year (upstream's
 * ExpirationExtensionSeconds) and carries the requested expiry as `warnafter`.
 */
export const EXTENDED_TOKEN_SECONDS = 24 * 365 * 60 * 60;

export interface BoundObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

export interface TokenRequest {
  apiVersion: string;
  kind: typeof TOKEN_REQUEST_KIND;
  metadata: { name?: string; namespace?: string; creationTimestamp: string | null; [field: string]: unknown };
  spec: { audiences: string[]; expirationSeconds: number; boundObjectRef?: BoundObjectReference | null };
  status: { token: string; expirationTimestamp: string | null };
}

/** Schemas of the TokenRequest family (Protobuf field numbers from k8s.io/api/authentication/v1/generated.proto): kubectl posts Protobuf. */
export const TOKEN_REQUEST_TYPES: readonly TypeDef[] = [
  type(TOKEN_REQUEST_TYPE, "Requests a token for a service account.", {
    metadata: f(1, s.ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), "Standard object's metadata."),
    spec: f(2, s.ref(`${AUTHENTICATION_V1}.TokenRequestSpec`), "What the token is for.", { required: true }),
    status: f(3, s.ref(`${AUTHENTICATION_V1}.TokenRequestStatus`), "The token issued."),
  }),
  type(`${AUTHENTICATION_V1}.TokenRequestSpec`, "The audiences, lifetime and bound object of a requested token.", {
    audiences: f(1, s.array(s.string(), { listType: "atomic" }), "Who the token is for; the API server's audiences when empty."),
    expirationSeconds: f(4, s.int64(), "Requested lifetime in seconds, at least 600."),
    boundObjectRef: f(3, s.ref(`${AUTHENTICATION_V1}.BoundObjectReference`), "An object (Pod or Secret) the token is bound to."),
  }),
  type(`${AUTHENTICATION_V1}.TokenRequestStatus`, "The result of a token request.", {
    token: f(1, s.string(), "The opaque bearer token.", { required: true }),
    expirationTimestamp: f(2, s.time(), "When the token expires.", { required: true }),
  }),
  type(`${AUTHENTICATION_V1}.BoundObjectReference`, "A reference to the object a token is bound to.", {
    kind: f(1, s.string(), "Pod or Secret."),
    apiVersion: f(2, s.string(), "API version of the referent."),
    name: f(3, s.string(), "Name of the referent."),
    uid: f(4, s.string(), "UID of the referent."),
  }),
];

/** Upstream's ValidateTokenRequest: the lifetime's bounds. */
export function validateTokenRequestSpec(spec: { expirationSeconds: number }): FieldError[] {
  const errs: FieldError[] = [];
  const seconds = spec.expirationSeconds;
  if (seconds < MIN_TOKEN_SECONDS) errs.push({ type: "FieldValueInvalid", field: "spec.expirationSeconds", badValue: seconds, detail: "may not specify a duration less than 10 minutes" });
  if (seconds > MAX_TOKEN_SECONDS) errs.push({ type: "FieldValueInvalid", field: "spec.expirationSeconds", badValue: seconds, detail: "may not specify a duration larger than 2^32 seconds" });
  return errs;
}

/** The names a service account's token and its files go by, per profile. */
export interface ServiceAccountNames {
  /** The JWT's private claim ("kubernetes.io" on the upstream profile). */
  readonly claim: string;
  /** Where every container finds token, ca.crt and namespace. */
  readonly mountPath: string;
  /** The projected volume's name prefix ("kube-api-access-"). */
  readonly volumePrefix: string;
  /** The configmap in every namespace holding the cluster CA under ca.crt ("kube-root-ca.crt"). */
  readonly rootCaConfigMap: string;
  /** The user extra keys of pod-bound tokens ("authentication.kubernetes.io/pod-name"). */
  readonly podNameExtra: string;
  readonly podUidExtra: string;
  /** The audit annotation on a request whose extended token is past its `warnafter` ("authentication.k8s.io/stale-token"). */
  readonly staleTokenAnnotation: string;
}

export function serviceAccountNames(naming: Naming): ServiceAccountNames {
  const product = naming.systemNamespace.replace(/-system$/, "");
  return {
    claim: naming.keyDomain,
    mountPath: `/var/run/secrets/${naming.keyDomain}/serviceaccount`,
    volumePrefix: `${product}-api-access-`,
    rootCaConfigMap: `${product}-root-ca.crt`,
    podNameExtra: `authentication.${naming.keyDomain}/pod-name`,
    podUidExtra: `authentication.${naming.keyDomain}/pod-uid`,
    staleTokenAnnotation: `${naming.authenticationGroup}/stale-token`,
  };
}

/** Upstream's service-account user name and groups (k8s.io/apiserver/pkg/authentication/serviceaccount). */
export function serviceAccountUser(namespace: string, name: string): { name: string; groups: string[] } {
  return { name: `system:serviceaccount:${namespace}:${name}`, groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`] };
}
