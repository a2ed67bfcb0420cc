// The Node authorizer (upstream's plugin/pkg/auth/authorizer/node): a user
// system:node:NAME in group system:nodes may read the secrets, config maps,
// persistent volume claims and service-account tokens that pods bound to
// node NAME refer to (the graph is read from the pods' watch cache, in the
// object's namespace, at each request), may use only its own lease in the
// node-lease namespace, and may do what upstream's node rules allow
// (api/rbac/bootstrap.ts nodeRules: its Node, pods and their status, events,
// CSRs...), which the NodeRestriction admission step narrows to its own
// objects. Anything else gets no opinion, so RBAC may still allow it; the
// reason ends up in the 403 ("no relationship found between node 'X' and
// this object").

import type { ResolvedRules, RuleResolver } from "./rules.js";
import { nodeOfUser } from "../../api/certificates/index.js";
import { podReferences, type PodReferences } from "../../api/core/pod-references.js";
import type { Pod } from "../../api/core/types.js";
import { nodeRules, ruleAllows, type PolicyRule } from "../../api/rbac/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { Authorizer, Decision, RequestAttributes, UserInfo } from "../filters/index.js";
import type { RegistryStore } from "../registry/store.js";

const ALLOW: Decision = Object.freeze({ decision: "Allow" });
const NO_OPINION: Decision = Object.freeze({ decision: "NoOpinion" });
const ANY = { mode: "Any" } as const;

const noOpinion = (reason: string): Decision => ({ decision: "NoOpinion", reason });


export class NodeAuthorizer implements Authorizer, RuleResolver {
  readonly #pods: RegistryStore;
  readonly #claims: RegistryStore | undefined;
  readonly #naming: Naming;
  readonly #rules: readonly PolicyRule[];

  /** `claims`: the PersistentVolumeClaims' store, for the pod → claim → volume edge (absent: no volume is related). */
  constructor(pods: RegistryStore, naming: Naming, claims?: RegistryStore) {
    this.#pods = pods;
    this.#claims = claims;
    this.#naming = naming;
    this.#rules = nodeRules(naming);
  }

  /** Upstream's RulesFor: nothing for other users (complete); a node's rights are not listed (incomplete, with why). */
  async rulesFor(user: UserInfo): Promise<ResolvedRules> {
    if (nodeOfUser(user) === undefined) return { rules: [], errors: [], incomplete: false };
    return { rules: [], errors: ["node authorizer does not support user rule resolution"], incomplete: true };
  }

  async authorize(user: UserInfo, a: RequestAttributes): Promise<Decision> {
    const node = nodeOfUser(user);
    if (node === undefined) return NO_OPINION;
    if (node === "") return noOpinion(`unknown node for user ${JSON.stringify(user.name)}`);
    if (a.resourceRequest) {
      if (a.apiGroup === "") {
        switch (a.resource) {
          case "secrets":
            return this.#read(node, a, (r) => r.secrets);
          case "configmaps":
            return this.#read(node, a, (r) => r.configMaps);
          case "persistentvolumeclaims":
            if (a.verb !== "get") return noOpinion("can only get individual resources of this type");
            if (a.subresource !== "") return noOpinion("cannot get subresource");
            return this.#related(node, a, (r) => r.claims);
          case "persistentvolumes":
            if (a.verb !== "get") return noOpinion("can only get individual resources of this type");
            if (a.subresource !== "") return noOpinion("cannot get subresource");
            return this.#volume(node, a);
          case "serviceaccounts":
            if (a.verb !== "create" || a.name === "") return noOpinion("can only create tokens for individual service accounts");
            if (a.subresource !== "token") return noOpinion("can only create token subresource of serviceaccount");
            return this.#related(node, a, (r) => new Set([r.serviceAccount]));
        }
      }
      if (a.apiGroup === this.#naming.coordinationGroup && a.resource === "leases") return this.#lease(node, a);
    }
    return this.#rules.some((r) => ruleAllows(r, a)) ? ALLOW : NO_OPINION;
  }

  /** Upstream's authorizeReadNamespacedObject: get, list or watch of one named object in a namespace. */
  #read(node: string, a: RequestAttributes, refs: (r: PodReferences) => ReadonlySet<string>): Promise<Decision> | Decision {
    if (a.verb !== "get" && a.verb !== "list" && a.verb !== "watch") return noOpinion("can only read resources of this type");
    if (a.subresource !== "") return noOpinion("cannot read subresource");
    if (a.namespace === "") return noOpinion("can only read namespaced object of this type");
    return this.#related(node, a, refs);
  }

  /** Whether a pod bound to `node`, in the object's namespace, refers to it. */
  async #related(node: string, a: RequestAttributes, refs: (r: PodReferences) => ReadonlySet<string>): Promise<Decision> {
    if (a.name === "") return noOpinion("No Object name found");
    const { items } = await this.#pods.cacher.list(this.#pods.prefixFor(a.namespace), ANY);
    for (const item of items) {
      const pod = item.object as Pod;
      if (pod.spec?.nodeName === node && refs(podReferences(pod)).has(a.name)) return ALLOW;
    }
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }

  /** Upstream's graph edge pod → claim → volume: a volume bound to a claim that a pod bound to `node` uses. */
  async #volume(node: string, a: RequestAttributes): Promise<Decision> {
    if (a.name === "") return noOpinion("No Object name found");
    if (this.#claims !== undefined) {
      const { items } = await this.#pods.cacher.list(this.#pods.prefixFor(undefined), ANY);
      for (const item of items) {
        const pod = item.object as Pod;
        if (pod.spec?.nodeName !== node) continue;
        for (const claim of podReferences(pod).claims) {
          const { items: found } = await this.#claims.cacher.list(this.#claims.prefixFor(pod.metadata.namespace), ANY);
          if (found.some((c) => c.object.metadata.name === claim && (c.object as { spec?: { volumeName?: string } }).spec?.volumeName === a.name)) return ALLOW;
        }
      }
    }
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }

  /** Upstream's authorizeLease: only its own lease, in the node-lease namespace. */
  #lease(node: string, a: RequestAttributes): Decision {
    if (!["get", "create", "update", "patch", "delete"].includes(a.verb)) return noOpinion("can only get, create, update, patch, or delete a node lease");
    if (a.namespace !== this.#naming.nodeLeaseNamespace) return noOpinion(`can only access leases in the ${JSON.stringify(this.#naming.nodeLeaseNamespace)} system namespace`);
    if (a.verb !== "create" && a.name !== node) return noOpinion("can only access node lease with the same name as the requesting node");
    return ALLOW;
  }
}
