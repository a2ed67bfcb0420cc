// --authorization-mode: the ordered list of authorizers the chain asks
// (upstream's union authorizer). AlwaysAllow lets every authenticated request
// through; Node lets node agents (system:node:NAME) reach what their pods use (node.ts); RBAC asks the roles and bindings (rbac.ts). Checked once, at
// flag parsing and again at server start, with upstream's wording.

import type { Naming } from "../../machinery/naming.js";
import { alwaysAllow, type Authorizer } from "../filters/index.js";
import type { Stores } from "../storage-factory.js";
import { RbacAuthorizer, type RbacStores } from "./rbac.js";
import { NodeAuthorizer } from "./node.js";

export const AUTHORIZATION_MODES = ["AlwaysAllow", "Node", "RBAC"] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

/** What is wrong with a mode list, or undefined when it is valid. */
export function checkAuthorizationModes(modes: readonly string[]): string | undefined {
  if (modes.length === 0) return "at least one authorization mode must be passed";
  const seen = new Set<string>();
  for (const mode of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) {
      return `authorization-mode ${JSON.stringify(mode)} is not a valid mode (supported: ${AUTHORIZATION_MODES.join(", ")})`;
    }
    if (seen.has(mode)) return `authorization-mode ${JSON.stringify(mode)} has mode specified more than once`;
    seen.add(mode);
  }
  return undefined;
}

/** The authorizers of `modes`, in order; throws on a bad list or when RBAC is asked for without its kinds served. */
export function authorizersFor(modes: readonly string[], stores: Stores, naming: Naming): Authorizer[] {
  const problem = checkAuthorizationModes(modes);
  if (problem !== undefined) throw new Error(problem);
  return modes.map((mode) => (mode === "RBAC" ? new RbacAuthorizer(rbacStores(stores, naming)) : mode === "Node" ? nodeAuthorizer(stores, naming) : alwaysAllow));
}

/** RBAC (with the bootstrap roles, the admin is in system:masters) where its kinds are served; AlwaysAllow otherwise (test servers of a few kinds). */
export function defaultAuthorizationModes(stores: Stores, naming: Naming): AuthorizationMode[] {
  if (stores.for({ group: naming.rbacGroup, resource: "clusterrolebindings" }) === undefined) return ["AlwaysAllow"];
  return stores.for({ group: "", resource: "pods" }) !== undefined ? ["Node", "RBAC"] : ["RBAC"];
}

/** The Node authorizer reads the pods' watch cache for its graph. */
function nodeAuthorizer(stores: Stores, naming: Naming): Authorizer {
  const pods = stores.for({ group: "", resource: "pods" });
  if (pods === undefined) throw new Error("authorization mode Node needs pods, which this server does not serve");
  return new NodeAuthorizer(pods, naming, stores.for({ group: "", resource: "persistentvolumeclaims" }));
}

/**
 * The RBAC rule reader escalation checks ask whatever the modes: the RBAC
 * authorizer among `authorizers` (one binding index), else one over the
 * server's stores, or undefined when RBAC's kinds are not served.
 */
export function rbacRules(stores: Stores, naming: Naming, authorizers: readonly Authorizer[] = []): RbacAuthorizer | undefined {
  const running = authorizers.find((a): a is RbacAuthorizer => a instanceof RbacAuthorizer);
  if (running !== undefined) return running;
  return stores.for({ group: naming.rbacGroup, resource: "clusterrolebindings" }) !== undefined ? new RbacAuthorizer(rbacStores(stores, naming)) : undefined;
}

function rbacStores(stores: Stores, naming: Naming): RbacStores {
  const of = (resource: string) => {
    const store = stores.for({ group: naming.rbacGroup, resource });
    if (store === undefined) throw new Error(`authorization mode RBAC needs ${resource}.${naming.rbacGroup}, which this server does not serve`);
    return store;
  };
  return { roles: of("roles"), clusterRoles: of("clusterroles"), roleBindings: of("rolebindings"), clusterRoleBindings: of("clusterrolebindings") };
}
