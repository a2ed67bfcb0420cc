// The component servers' questions to the API server (src/component/scraper-auth.ts): a
// TokenReview for a bearer token and a SubjectAccessReview for every caller, posted with the
// component's own credentials under upstream's group names (served on both naming profiles).
// Component sits below client, so it declares the questions and the programs hand it these answers.

import type { AccessAttributes, ApiServerCheck, CallerInfo, TokenReviewAnswer } from "../component/index.js";
import type { ClientConfig } from "./kubeconfig.js";
import { RestClient } from "./rest.js";

const TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews";
const ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

export function apiServerCheck(config: ClientConfig): ApiServerCheck {
  const client = new RestClient(config, { userAgent: "orch-component-authn", requestTimeoutMs: 10_000 });
  const post = async <T>(path: string, kind: string, spec: object): Promise<T> => {
    const res = await client.request({
      method: "POST", path,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ apiVersion: path.split("/").slice(2, 4).join("/"), kind, spec }),
    });
    const text = res.body.toString("utf8");
    if (res.status !== 201 && res.status !== 200) throw new Error(`${kind}: HTTP ${res.status}: ${messageOf(text)}`);
    return (JSON.parse(text) as { status?: T }).status ?? ({} as T);
  };
  return {
    ...(config.ca !== undefined ? { ca: config.ca } : {}),
    async tokenReview(token, audiences): Promise<TokenReviewAnswer> {
      const status = await post<{ authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string }>(
        TOKEN_REVIEWS, "TokenReview", { token, ...(audiences && audiences.length > 0 ? { audiences: [...audiences] } : {}) });
      if (status.authenticated !== true || !status.user?.username) return { authenticated: false, ...(status.error ? { error: status.error } : {}) };
      const u = status.user;
      return {
        authenticated: true,
        user: { username: u.username!, groups: u.groups ?? [], ...(u.uid ? { uid: u.uid } : {}), ...(u.extra ? { extra: u.extra } : {}) },
      };
    },
    async subjectAccessReview(caller: CallerInfo, attributes: AccessAttributes) {
      const status = await post<{ allowed?: boolean; reason?: string; evaluationError?: string }>(ACCESS_REVIEWS, "SubjectAccessReview", {
        ...attributes,
        user: caller.username,
        groups: [...caller.groups],
        ...(caller.uid ? { uid: caller.uid } : {}),
        ...(caller.extra ? { extra: caller.extra } : {}),
      });
      return { allowed: status.allowed === true, ...(status.reason ? { reason: status.reason } : {}), ...(status.evaluationError ? { evaluationError: status.evaluationError } : {}) };
    },
    close: () => client.close(),
  };
}

function messageOf(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text.slice(0, 200);
  }
}
