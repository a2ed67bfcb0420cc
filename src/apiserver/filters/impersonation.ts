// Impersonation (upstream's WithImpersonation): a request with
// Impersonate-User (and optionally Impersonate-Group, repeatable,
// Impersonate-Uid and Impersonate-Extra-<key>) runs as that user, if the
// authorizers let its caller `impersonate` each of them:
//   users/<name> or serviceaccounts/<name> in <ns> (system:serviceaccount:<ns>:<name>), groups/<name>
//   in API group ""; uids/<uid> and userextras/<key> (subresource) named by the value in
//   the authentication group. The first refusal is a 403 with upstream's text.
// The impersonated user gets system:authenticated (system:unauthenticated for
// system:anonymous), and a service account without Impersonate-Group its fixed
// groups. Without Impersonate-User the other headers are a 400.

import { badRequest } from "../../machinery/index.js";
import type { Incoming } from "../http/respond.js";
import { refusal, type Authorizer } from "./authorization.js";
import { ANONYMOUS } from "./authentication.js";
import type { Filter, UserInfo } from "./context.js";
import type { RequestAttributes } from "./request-info.js";

export interface ImpersonationOptions {
  readonly authorizers: readonly Authorizer[];
  /** Where uids and userextras are (naming.authenticationGroup). */
  readonly authenticationGroup: string;
}

interface Requested {
  readonly user: string | undefined;
  readonly groups: string[];
  readonly uid: string | undefined;
  readonly extra: Map<string, string[]>;
}

const EXTRA_PREFIX = "impersonate-extra-";
const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

export function impersonationFilter({ authorizers, authenticationGroup }: ImpersonationOptions): Filter {
  return async (ctx, next) => {
    const asked = requested(ctx.req);
    if (asked === undefined) return next();
    const caller = ctx.user ?? ANONYMOUS;
    if (asked.user === undefined) {
      const what = [...asked.groups.map((g) => `group ${JSON.stringify(g)}`), ...(asked.uid !== undefined ? [`uid ${JSON.stringify(asked.uid)}`] : []), ...[...asked.extra.keys()].map((k) => `extra ${JSON.stringify(k)}`)];
      throw badRequest(`requested [${what.join(" ")}] without impersonating a user`);
    }
    const checks: RequestAttributes[] = [];
    const attrs = (apiGroup: string, resource: string, name: string, extra: Partial<RequestAttributes> = {}): RequestAttributes => ({
      resourceRequest: true, verb: "impersonate", apiGroup, apiVersion: "v1", resource, subresource: "", namespace: "", name, path: ctx.attributes.path, ...extra,
    });
    let groups = [...asked.groups];
    const sa = serviceAccount(asked.user);
    if (sa !== undefined) {
      checks.push(attrs("", "serviceaccounts", sa.name, { namespace: sa.namespace }));
      if (groups.length === 0) groups = ["system:serviceaccounts", `system:serviceaccounts:${sa.namespace}`];
    } else {
      checks.push(attrs("", "users", asked.user));
    }
    for (const g of asked.groups) checks.push(attrs("", "groups", g));
    for (const [key, values] of asked.extra) for (const v of values) checks.push(attrs(authenticationGroup, "userextras", v, { subresource: key }));
    if (asked.uid !== undefined) checks.push(attrs(authenticationGroup, "uids", asked.uid));

    for (const a of checks) {
      let reason = "";
      let allowed = false;
      for (const authorizer of authorizers) {
        const d = await authorizer.authorize(caller, a);
        if (d.decision === "NoOpinion") { reason ||= d.reason ?? ""; continue; }
        allowed = d.decision === "Allow";
        reason = d.reason ?? "";
        break;
      }
      if (!allowed) throw refusal(caller, a, reason);
    }

    const fixed = asked.user === ANONYMOUS.name ? "system:unauthenticated" : "system:authenticated";
    if (!groups.includes(fixed)) groups.push(fixed);
    const user: UserInfo = {
      name: asked.user,
      groups,
      ...(asked.uid !== undefined ? { uid: asked.uid } : {}),
      ...(asked.extra.size > 0 ? { extra: Object.fromEntries(asked.extra) } : {}),
    };
    ctx.user = user;
    return next();
  };
}

/** The impersonation headers, each occurrence apart (rawHeaders: Node joins repeated headers with ", "); undefined when there are none. */
function requested(req: Incoming): Requested | undefined {
  let user: string | undefined;
  let uid: string | undefined;
  const groups: string[] = [];
  const extra = new Map<string, string[]>();
  let any = false;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!name.startsWith("impersonate-")) continue;
    const value = raw[i + 1]!;
    if (name === "impersonate-user") { user = value; any = true; }
    else if (name === "impersonate-group") { groups.push(value); any = true; }
    else if (name === "impersonate-uid") { uid = value; any = true; }
    else if (name.startsWith(EXTRA_PREFIX) && name.length > EXTRA_PREFIX.length) {
      let key: string;
      try {
        key = decodeURIComponent(name.slice(EXTRA_PREFIX.length)).toLowerCase();
      } catch {
        throw badRequest(`malformed impersonation header ${raw[i]}: the key is not a valid percent-encoding`);
      }
      extra.set(key, [...(extra.get(key) ?? []), value]);
      any = true;
    }
  }
  return any ? { user, groups, uid, extra } : undefined;
}

function serviceAccount(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = user.slice(SERVICE_ACCOUNT_PREFIX.length).split(":");
  return parts.length === 2 && parts[0] !== "" && parts[1] !== "" ? { namespace: parts[0]!, name: parts[1]! } : undefined;
}
