// Serves `token` (declared in src/api/subresources/token.ts): a POST of a
// TokenRequest to serviceaccounts/NAME/token answers 201 with the request and
// status.token, a JWT signed for the account (../../authentication/
// service-account-tokens.ts), as upstream's TokenREST: the lifetime is
// checked (422), the account must exist (404), a boundObjectRef names a Pod
// or a Secret of the namespace that exists (404) with the given uid (409),
// and a pod must run as the account (400). Empty audiences become the API
// audiences; --service-account-max-token-expiration caps the lifetime;
// --service-account-extend-token-expiration signs a pod's projected-volume
// request (3607 s) for a year with `warnafter` at the hour.
// Bodies are JSON, YAML or Protobuf (kubectl create token sends Protobuf).

import {
  DEFAULT_TOKEN_SECONDS, EXTENDED_TOKEN_SECONDS, PROJECTED_TOKEN_SECONDS, TOKEN_REQUEST_KIND, TOKEN_REQUEST_TYPE, validateTokenRequestSpec,
  type BoundObjectReference, type TokenRequest,
} from "../../../api/authentication/token-request.js";
import type { Pod } from "../../../api/core/types.js";
import { badRequest, conflict, internalError, invalid, notFound, type ApiObject } from "../../../machinery/index.js";
import { readBody } from "../../http/body.js";
import { decodeObjectBody } from "../../http/decode-body.js";
import { sendJson } from "../../http/respond.js";
import type { SubresourceRequest } from "../request.js";

export async function requestToken(r: SubresourceRequest): Promise<void> {
  const tokens = r.serviceAccountTokens;
  if (tokens === undefined) throw internalError(new Error("service-account tokens are not configured on this server"));
  // The profile's group, and upstream's spelling kubectl has compiled in.
  const authGroup = r.subresource.responseKind!.group;
  const groups = [...new Set([authGroup, "authentication.k8s.io"])];
  const encoding = {
    ...r.encoding,
    lookupType: (apiVersion: string, kind: string) =>
      kind === TOKEN_REQUEST_KIND && groups.some((g) => apiVersion === `${g}/v1`) ? TOKEN_REQUEST_TYPE : r.encoding.lookupType(apiVersion, kind),
  };
  const raw = await readBody(r.req);
  const body = raw.length === 0 ? {} : decodeObjectBody(r.req.headers["content-type"], raw, encoding).value;
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw badRequest(`the body of a ${TOKEN_REQUEST_KIND} must be an object`);
  const sent = body as { apiVersion?: unknown; kind?: unknown; spec?: unknown };
  if (sent.kind !== undefined && sent.kind !== TOKEN_REQUEST_KIND) throw badRequest(`the body is a ${JSON.stringify(sent.kind)}, not a ${TOKEN_REQUEST_KIND}`);
  if (sent.apiVersion !== undefined && !groups.some((g) => sent.apiVersion === `${g}/v1`)) {
    throw badRequest(`the body's apiVersion ${JSON.stringify(sent.apiVersion)} is not ${authGroup}/v1`);
  }
  const gk = { group: authGroup, kind: TOKEN_REQUEST_KIND };
  const spec = readSpec(sent.spec, gk);

  const namespace = r.path.namespace!;
  const account = (await r.store.get(namespace, r.name)).object;
  let pod: ApiObject | undefined;
  let secret: ApiObject | undefined;
  const ref = spec.boundObjectRef;
  if (ref != null) {
    const { group, version } = splitApiVersion(ref.apiVersion ?? "");
    const resource = group === "" && ref.kind === "Pod" ? "pods" : group === "" && ref.kind === "Secret" ? "secrets" : undefined;
    if (resource === undefined) throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${ref.kind ?? ""}`);
    const bound = await tokens.objects.get(resource, namespace, ref.name ?? "", "fresh");
    if (bound === undefined) throw notFound({ group: "", resource }, ref.name ?? "");
    if (resource === "pods") {
      if ((bound as Pod).spec?.serviceAccountName !== r.name) throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(r.name)} to pod running with different serviceaccount name.`);
      pod = bound;
    } else {
      secret = bound;
    }
    if (ref.uid !== undefined && ref.uid !== "" && ref.uid !== bound.metadata.uid) {
      throw conflict({ group: "", resource: ref.kind! }, ref.name ?? "", `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
  }
  const audiences = spec.audiences.length > 0 ? spec.audiences : [...tokens.apiAudiences];
  const max = tokens.maxExpirationSeconds;
  const expirationSeconds = max > 0 && spec.expirationSeconds > max ? max : spec.expirationSeconds;
  // Upstream's safe transition of projected tokens: a pod-bound request for exactly the admission step's lifetime is
  // signed for a year and warns (audit) after the hour asked; the answer reports the hour.
  const extended = tokens.extendExpiration && pod !== undefined && expirationSeconds === PROJECTED_TOKEN_SECONDS;
  const nowSeconds = Math.floor(Date.now() / 1000);
  const refOf = (o: ApiObject) => ({ name: o.metadata.name ?? "", uid: o.metadata.uid ?? "" });
  const token = await tokens.issue({
    namespace,
    serviceAccount: refOf(account),
    ...(pod !== undefined ? { pod: refOf(pod) } : {}),
    ...(secret !== undefined ? { secret: refOf(secret) } : {}),
    audiences,
    expirationSeconds: extended ? EXTENDED_TOKEN_SECONDS : expirationSeconds,
    ...(extended ? { warnAfterSeconds: expirationSeconds } : {}),
  }, nowSeconds);
  const answer: TokenRequest = {
    apiVersion: typeof sent.apiVersion === "string" ? sent.apiVersion : `${authGroup}/v1`,
    kind: TOKEN_REQUEST_KIND,
    metadata: { name: r.name, namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds, boundObjectRef: ref ?? null },
    status: { token, expirationTimestamp: new Date((nowSeconds + expirationSeconds) * 1000).toISOString().replace(/\.\d+Z$/, "Z") },
  };
  return sendJson(r.res, 201, answer);
}

function readSpec(value: unknown, gk: { group: string; kind: string }): TokenRequest["spec"] {
  const spec = (value ?? {}) as { audiences?: unknown; expirationSeconds?: unknown; boundObjectRef?: unknown };
  if (typeof spec !== "object" || Array.isArray(spec)) throw badRequest("spec: must be an object");
  const audiences = spec.audiences ?? [];
  if (!Array.isArray(audiences) || !audiences.every((a) => typeof a === "string")) throw badRequest("spec.audiences: must be a list of strings");
  const seconds = spec.expirationSeconds ?? DEFAULT_TOKEN_SECONDS;
  if (typeof seconds !== "number" || !Number.isInteger(seconds)) throw badRequest("spec.expirationSeconds: must be an integer");
  const errs = validateTokenRequestSpec({ expirationSeconds: seconds });
  if (errs.length > 0) throw invalid(gk, "", errs);
  const ref = spec.boundObjectRef;
  if (ref != null && (typeof ref !== "object" || Array.isArray(ref))) throw badRequest("spec.boundObjectRef: must be an object");
  return { audiences: audiences as string[], expirationSeconds: seconds, ...(ref != null ? { boundObjectRef: ref as BoundObjectReference } : {}) };
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? { group: "", version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
