// The policy plugin's view of the cluster over the watch caches (the same
// cached reads as the webhooks'): policies, bindings, namespaces and params.

import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "../../../api/admissionregistration/index.js";
import { selectorFromLabelSelector } from "../../../machinery/index.js";
import type { Naming } from "../../../machinery/naming.js";
import type { CachedObjects } from "../webhooks/sources.js";
import type { PolicySources } from "./index.js";

function groupOf(apiVersion: string): string {
  return apiVersion.includes("/") ? apiVersion.split("/")[0]! : "";
}

export function policySources(naming: Naming, objects: CachedObjects): PolicySources {
  const group = naming.admissionregistrationGroup;
  return {
    exemptGroup: group,
    policies: async () => (await objects.list({ group, resource: "validatingadmissionpolicies" })) as ValidatingAdmissionPolicy[],
    bindings: async () => (await objects.list({ group, resource: "validatingadmissionpolicybindings" })) as ValidatingAdmissionPolicyBinding[],
    namespace: (name) => objects.get({ group: "", resource: "namespaces" }, undefined, name),
    versionOf: (g, resource) => objects.version({ group: g, resource }) ?? "v1",
    paramNamespaced: (apiVersion, kind) => objects.kindResource(groupOf(apiVersion), kind)?.namespaced,
    async params(apiVersion, kind, namespace, ref) {
      const target = objects.kindResource(groupOf(apiVersion), kind);
      if (target === undefined) return `failed to find resource referenced by paramKind: '${apiVersion}, Kind=${kind}'`;
      if (ref.name) {
        const one = await objects.get(target.resource, namespace, ref.name);
        return one === undefined ? [] : [one];
      }
      const selector = selectorFromLabelSelector(ref.selector ?? {});
      return (await objects.list(target.resource)).filter((o) => (namespace === undefined || o.metadata.namespace === namespace) && selector.matches(o.metadata.labels ?? {}));
    },
  };
}
