// NodeRestriction (upstream's plugin/pkg/admission/noderestriction): what
// the Node authorizer's node rules let any node do, narrowed to the node's
// own objects. A system:node:NAME user may create and change only Node NAME
// (no labels under node-restriction.<domain>/, no labels of the key domain
// outside upstream's node agent list, no taint changes), update the status
// of pods bound to it, create only mirror pods bound to itself that refer to
// no secrets, config maps, claims or service account, delete only pods bound
// to it, and write only its own lease. Refusals are upstream's 403s.

import type { AdmissionAttributes, ValidatingPlugin } from "../../api/admission.js";
import { nodeOfUser } from "../../api/certificates/index.js";
import { podReferences } from "../../api/core/pod-references.js";
import type { Node, Pod } from "../../api/core/types.js";
import { forbidden } from "../../machinery/index.js";
import { configAnnotations, type Naming } from "../../machinery/naming.js";

/** Labels a node agent may set on its Node (upstream's kubelet labels), under the naming table's key domain. */
export function agentLabels(naming: Naming): { keys: ReadonlySet<string>; namespaces: readonly string[] } {
  const d = naming.keyDomain;
  return {
    keys: new Set([
      `${d}/hostname`, `topology.${d}/zone`, `topology.${d}/region`, `failure-domain.beta.${d}/zone`, `failure-domain.beta.${d}/region`,
      `beta.${d}/instance-type`, `node.${d}/instance-type`, `${d}/os`, `${d}/arch`, `beta.${d}/os`, `beta.${d}/arch`,
    ]),
    namespaces: [`${naming.agentName}.${d}`, `node.${d}`],
  };
}

function labelNamespace(key: string): string {
  const i = key.indexOf("/");
  return i < 0 ? "" : key.slice(0, i);
}

const under = (namespace: string, domain: string) => namespace === domain || namespace.endsWith(`.${domain}`);

/** Upstream's getForbiddenLabels: node-restriction.<domain> labels, and the product's labels outside the node agent's list; sorted. */
export function forbiddenNodeLabels(modified: Iterable<string>, naming: Naming): string[] {
  const allowed = agentLabels(naming);
  const out = new Set<string>();
  for (const key of modified) {
    const ns = labelNamespace(key);
    if (under(ns, `node-restriction.${naming.keyDomain}`)) out.add(key);
    const product = under(ns, naming.keyDomain) || under(ns, naming.groupSuffix);
    if (product && !allowed.keys.has(key) && !allowed.namespaces.some((n) => under(ns, n))) out.add(key);
  }
  return [...out].sort();
}

function modifiedLabels(a: Record<string, string> = {}, b: Record<string, string> = {}): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) out.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out.add(k);
  return out;
}

export function nodeRestriction(naming: Naming): ValidatingPlugin {
  const mirror = configAnnotations(naming.keyDomain).mirror;
  const refuse = (a: AdmissionAttributes, reason: string) => forbidden(a.resource, a.name, reason);

  const pods = (node: string, a: AdmissionAttributes): void => {
    const pod = (a.object ?? a.oldObject) as Pod;
    if (a.subresource === "status") {
      if (a.operation !== "UPDATE") throw refuse(a, `unexpected operation ${JSON.stringify(a.operation)}`);
      if ((a.oldObject as Pod).spec?.nodeName !== node) throw refuse(a, `node ${JSON.stringify(node)} can only update pod status for pods with spec.nodeName set to itself`);
      return;
    }
    if (a.subresource !== undefined && a.subresource !== "") {
      throw refuse(a, `unexpected pod subresource ${JSON.stringify(a.subresource)}, only 'status' and 'eviction' are allowed`);
    }
    if (a.operation === "DELETE") {
      if (pod.spec?.nodeName !== node) throw refuse(a, `node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`);
      return;
    }
    if (a.operation !== "CREATE") throw refuse(a, `unexpected operation ${JSON.stringify(a.operation)}, node ${JSON.stringify(node)} can only create and delete mirror pods`);
    if (pod.metadata.annotations?.[mirror] === undefined) throw refuse(a, `pod does not have ${JSON.stringify(mirror)} annotation, node ${JSON.stringify(node)} can only create mirror pods`);
    if (pod.spec?.nodeName !== node) throw refuse(a, `node ${JSON.stringify(node)} can only create pods with spec.nodeName set to itself`);
    const owners = pod.metadata.ownerReferences ?? [];
    if (owners.length > 1) throw refuse(a, `node ${JSON.stringify(node)} can only create pods with a single owner reference set to itself`);
    const owner = owners[0];
    if (owner !== undefined) {
      if (owner.apiVersion !== "v1" || owner.kind !== "Node" || owner.name !== node) throw refuse(a, `node ${JSON.stringify(node)} can only create pods with an owner reference set to itself`);
      if (owner.controller !== true) throw refuse(a, `node ${JSON.stringify(node)} can only create pods with a controller owner reference set to itself`);
      if (owner.blockOwnerDeletion === true) throw refuse(a, `node ${JSON.stringify(node)} must not set blockOwnerDeletion on an owner reference`);
    }
    const refs = podReferences(pod);
    if (refs.serviceAccount !== "") throw refuse(a, `node ${JSON.stringify(node)} can not create pods that reference a service account`);
    if (refs.secrets.size > 0) throw refuse(a, `node ${JSON.stringify(node)} can not create pods that reference secrets`);
    if (refs.configMaps.size > 0) throw refuse(a, `node ${JSON.stringify(node)} can not create pods that reference configmaps`);
    if (refs.claims.size > 0) throw refuse(a, `node ${JSON.stringify(node)} can not create pods that reference persistentvolumeclaims`);
  };

  const nodes = (node: string, a: AdmissionAttributes): void => {
    const requested = a.name || ((a.object ?? a.oldObject)?.metadata.name ?? "");
    if (requested !== node) throw refuse(a, `node ${JSON.stringify(node)} is not allowed to modify node ${JSON.stringify(requested)}`);
    if (a.operation === "CREATE") {
      const bad = forbiddenNodeLabels(Object.keys((a.object as Node).metadata.labels ?? {}), naming);
      if (bad.length > 0) throw refuse(a, `node ${JSON.stringify(node)} is not allowed to set the following labels: ${bad.join(", ")}`);
    }
    if (a.operation === "UPDATE") {
      const next = a.object as Node;
      const old = a.oldObject as Node;
      if (JSON.stringify(next.spec?.taints ?? []) !== JSON.stringify(old.spec?.taints ?? [])) throw refuse(a, `node ${JSON.stringify(node)} is not allowed to modify taints`);
      const bad = forbiddenNodeLabels(modifiedLabels(next.metadata.labels, old.metadata.labels), naming);
      if (bad.length > 0) throw refuse(a, `is not allowed to modify labels: ${bad.join(", ")}`);
    }
  };

  return {
    name: "NodeRestriction",
    handles: (a) => a.operation !== "CONNECT" && a.request?.user !== undefined && nodeOfUser(a.request.user) !== undefined,
    validate(a) {
      const node = nodeOfUser(a.request!.user!)!;
      if (node === "") throw refuse(a, `could not determine node from user ${JSON.stringify(a.request!.user!.name)}`);
      const { group, resource } = a.resource;
      if (group === "" && resource === "pods") return pods(node, a);
      if (group === "" && resource === "nodes") return nodes(node, a);
      if (group === "" && resource === "persistentvolumeclaims" && a.subresource !== "status") throw refuse(a, "may only update PVC status");
      if (group === naming.coordinationGroup && resource === "leases") {
        if (a.namespace !== naming.nodeLeaseNamespace) throw refuse(a, `can only access leases in the ${JSON.stringify(naming.nodeLeaseNamespace)} system namespace`);
        if ((a.operation === "CREATE" ? a.object?.metadata.name : a.name) !== node) throw refuse(a, "can only access node lease with the same name as the requesting node");
      }
    },
  };
}
