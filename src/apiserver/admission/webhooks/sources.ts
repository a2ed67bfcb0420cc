// The webhook plugins' view of the cluster, over the watch caches: the
// configurations, namespace labels, and where a Service reference leads.

import type { WebhookConfiguration } from "../../../api/admissionregistration/index.js";
import type { Endpoints, Service } from "../../../api/core/types.js";
import type { ApiObject, GroupResource } from "../../../machinery/index.js";
import type { Naming } from "../../../machinery/naming.js";
import type { WebhookSources } from "./index.js";
import type { ResourceDefinition } from "../../../api/resource.js";
import { equivalence } from "./equivalent.js";

/** What the sources read: cached objects of served kinds (the server's stores implement it). */
export interface CachedObjects {
  list(resource: GroupResource): Promise<ApiObject[]>;
  get(resource: GroupResource, namespace: string | undefined, name: string): Promise<ApiObject | undefined>;
  /** The first version a resource is served at; undefined when it is not served. */
  version(resource: GroupResource): string | undefined;
  /** The served resource of a kind (admission policies' paramKind). */
  kindResource(group: string, kind: string): { resource: GroupResource; namespaced: boolean } | undefined;
  /** Every served declaration (matchPolicy Equivalent's other versions and group names). */
  definitions(): Iterable<ResourceDefinition>;
}

export function webhookSources(naming: Naming, objects: CachedObjects): WebhookSources {
  const group = naming.admissionregistrationGroup;
  return {
    exemptGroup: group,
    mutating: async () => (await objects.list({ group, resource: "mutatingwebhookconfigurations" })) as WebhookConfiguration[],
    validating: async () => (await objects.list({ group, resource: "validatingwebhookconfigurations" })) as WebhookConfiguration[],
    namespaceLabels: async (name) => (await objects.get({ group: "", resource: "namespaces" }, undefined, name))?.metadata.labels,
    versionOf: (g, resource) => objects.version({ group: g, resource }) ?? "v1",
    resolveService: (namespace, name, port) => resolveService(objects, namespace, name, port),
    equivalence: equivalence(() => objects.definitions()),
  };
}

/** A ready endpoint of the service port (pod IP and target port), else the cluster IP and service port. */
export async function resolveService(objects: CachedObjects, namespace: string, name: string, port: number): Promise<{ host: string; port: number }> {
  const svc = (await objects.get({ group: "", resource: "services" }, namespace, name)) as Service | undefined;
  if (svc === undefined) throw new Error(`service "${name}" not found`);
  const sp = (svc.spec?.ports ?? []).find((p) => p.port === port);
  if (sp === undefined) throw new Error(`service "${namespace}/${name}" has no port ${port}`);
  const ep = (await objects.get({ group: "", resource: "endpoints" }, namespace, name)) as Endpoints | undefined;
  for (const subset of ep?.subsets ?? []) {
    const p = (subset.ports ?? []).find((x) => (x.name ?? "") === (sp.name ?? "")) ?? ((subset.ports ?? []).length === 1 && !sp.name ? subset.ports![0] : undefined);
    const address = (subset.addresses ?? []).find((a) => a.ip);
    if (p?.port !== undefined && address?.ip !== undefined) return { host: address.ip, port: p.port };
  }
  const ip = svc.spec?.clusterIP;
  if (ip && ip !== "None") return { host: ip, port };
  throw new Error(`service "${namespace}/${name}" has no endpoints`);
}
