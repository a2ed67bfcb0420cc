// Escalation prevention (upstream's RBAC policy-based storage): nobody grants
// rights they do not hold. Creating or updating a Role or ClusterRole whose
// rules the caller's own RBAC rules (in the role's namespace) do not cover is
// a 403 naming the missing rules, unless the caller may `escalate` that role
// resource; an aggregationRule needs every right (it can gather anything).
// Creating or updating a RoleBinding or ClusterRoleBinding is a 403 unless
// the caller may `bind` the role it refers to (resourceNames match the role's
// name) or holds all of that role's rules. system:masters is exempt, and so
// are the server's own writes (no user). A validating admission step, so dry
// runs are checked alike (seed 000, "Authentication": dry run needs the same
// rights).

import type { AdmissionAttributes, AdmissionUser, ValidatingPlugin } from "../../api/admission.js";
import type { ClusterRole, RoleBinding } from "../../api/rbac/index.js";
import { forbidden, goQuote, type ApiObject } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import { decide, type Authorizer, type RequestAttributes } from "../filters/index.js";
import { canonical } from "./bootstrap.js";
import { SYSTEM_MASTERS, type RbacAuthorizer } from "./rbac.js";
import { FULL_AUTHORITY, describeRules, uncovered } from "./rules.js";

export interface EscalationDeps {
  readonly rbacGroup: string;
  /** The server's authorizers: `escalate` and `bind` are asked of them (looked up per request: they are built after admission). */
  authorizers(): readonly Authorizer[];
  /** RBAC's rules: what the caller holds, and the rules a binding's roleRef names. */
  rbac(): RbacAuthorizer | undefined;
}

const ROLES = new Set(["roles", "clusterroles"]);
/** Upstream's RBAC group name, served as an alias of the profile's (api/alias-group.ts): the same objects, so the same check. */
const UPSTREAM_RBAC_GROUP = namingFor("k8s.io").rbacGroup;
const BINDINGS = new Set(["rolebindings", "clusterrolebindings"]);

export function rbacEscalation(deps: EscalationDeps): ValidatingPlugin {
  return {
    name: "RBACEscalation",
    handles: (a) =>
      (a.operation === "CREATE" || a.operation === "UPDATE") && a.subresource === undefined && (a.resource.group === deps.rbacGroup || a.resource.group === UPSTREAM_RBAC_GROUP) &&
      (ROLES.has(a.resource.resource) || BINDINGS.has(a.resource.resource)),
    async validate(a) {
      const user = a.request?.user;
      const rbac = deps.rbac();
      if (user === undefined || rbac === undefined || user.groups.includes(SYSTEM_MASTERS)) return;
      if (a.operation === "UPDATE" && onlyGarbageCollectionFields(a.object!, a.oldObject!)) return;
      const namespace = a.namespace ?? "";
      const ask = (verb: string, resource: string, name: string) => allowed(deps.authorizers(), user, {
        resourceRequest: true, verb, apiGroup: deps.rbacGroup, apiVersion: "*", resource, subresource: "", namespace, name, path: "",
      });
      if (ROLES.has(a.resource.resource)) {
        // Upstream asks with the request's name: none on create.
        if (await ask("escalate", a.resource.resource, a.operation === "CREATE" ? "" : a.name)) return;
        const role = a.object as ClusterRole;
        await confirmHeld(rbac, a, user, role.rules ?? []);
        if (a.resource.resource === "clusterroles" && role.aggregationRule !== undefined && role.aggregationRule !== null) {
          if (uncovered((await rbac.rulesFor(user, namespace)).rules, FULL_AUTHORITY).length > 0) {
            throw forbidden(a.resource, a.name, "must have cluster-admin privileges to use the aggregationRule");
          }
        }
        return;
      }
      const ref = (a.object as RoleBinding).roleRef ?? {};
      if (ref.kind !== "Role" && ref.kind !== "ClusterRole") return; // validation refuses it
      if (await ask("bind", ref.kind === "Role" ? "roles" : "clusterroles", ref.name ?? "")) return;
      const rules = await rbac.roleRules(ref, namespace);
      if (typeof rules === "string") throw forbidden(a.resource, a.name, rules);
      await confirmHeld(rbac, a, user, rules);
    },
  };
}

async function allowed(authorizers: readonly Authorizer[], user: AdmissionUser, attributes: RequestAttributes): Promise<boolean> {
  return (await decide(authorizers, user, attributes)).decision === "Allow";
}

/** Upstream's ConfirmNoEscalation: the caller's RBAC rules in the namespace must cover `rules`. */
async function confirmHeld(rbac: RbacAuthorizer, a: AdmissionAttributes, user: AdmissionUser, rules: Parameters<typeof uncovered>[1]): Promise<void> {
  const held = await rbac.rulesFor(user, a.namespace ?? "");
  const missing = uncovered(held.rules, rules);
  if (missing.length === 0) return;
  let message = `user ${goQuote(user.name)} (groups=[${user.groups.map(goQuote).join(" ")}]) is attempting to grant RBAC permissions not currently held:\n${describeRules(missing)}`;
  if (held.errors.length > 0) message += `; resolution errors: [${held.errors.join(" ")}]`;
  throw forbidden(a.resource, a.name, message);
}

/** Upstream's IsOnlyMutatingGCFields: an update that changes only owner references and finalizers is not checked. */
function onlyGarbageCollectionFields(next: ApiObject, old: ApiObject): boolean {
  const strip = (o: ApiObject) => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, generation: _g, ...meta } = o.metadata;
    return canonical({ ...o, metadata: meta });
  };
  return strip(next) === strip(old);
}
