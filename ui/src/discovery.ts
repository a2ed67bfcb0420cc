// What the server serves, from discovery (/api/v1, /apis and each group's
// preferred version): every kind, custom ones included, with its scope and
// verbs, so the dashboard needs no per-kind code. The group suffix (orch.io,
// or k8s.io with --api-group-suffix=k8s.io) is read from the served group
// names: the Table representation's group is meta.<suffix>.

import { getJson } from "./api.js";

export interface Resource {
  group: string;
  version: string;
  /** Plural, as in the URL. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** Its subresources (status, scale, log, exec...). */
  subresources: string[];
  shortNames: string[];
}

export interface Discovery {
  resources: Resource[];
  suffix: string;
  /** meta.<suffix>: the Table representation's group. */
  metaGroup: string;
  /** Annotation domain (kubernetes.io for the upstream profile, the suffix otherwise). */
  keyDomain: string;
  /** metrics.k8s.io/<version> when the resource metrics API is served. */
  metrics?: { group: string; version: string };
}

interface ResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs: string[]; shortNames?: string[] }[];
}

interface GroupList {
  groups: { name: string; preferredVersion: { groupVersion: string; version: string } }[];
}

/** The resource metrics API's group: upstream's name whatever the server's suffix, as kubectl top asks for it. */
export const METRICS_GROUP = "metrics.k8s.io";

export async function discover(): Promise<Discovery> {
  const [core, groups] = await Promise.all([getJson<ResourceList>("/api/v1"), getJson<GroupList>("/apis")]);
  const lists = await Promise.all(groups.groups.map((g) => getJson<ResourceList>(`/apis/${g.preferredVersion.groupVersion}`).catch(() => undefined)));
  const resources: Resource[] = [];
  for (const list of [core, ...lists]) {
    if (list === undefined) continue;
    const [group, version] = list.groupVersion.includes("/") ? list.groupVersion.split("/") as [string, string] : ["", list.groupVersion];
    for (const r of list.resources) {
      if (r.name.includes("/")) continue;
      const subresources = list.resources.filter((s) => s.name.startsWith(`${r.name}/`)).map((s) => s.name.slice(r.name.length + 1));
      resources.push({ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs, subresources, shortNames: r.shortNames ?? [] });
    }
  }
  const names = groups.groups.map((g) => g.name);
  const suffix = suffixOf(names);
  // The resource metrics API keeps upstream's group name on both naming profiles (kubectl top asks for it by that name).
  const metricsGroup = groups.groups.find((g) => g.name === METRICS_GROUP) ?? groups.groups.find((g) => g.name === `metrics.${suffix}`);
  return {
    resources,
    suffix,
    metaGroup: `meta.${suffix}`,
    keyDomain: suffix === "k8s.io" ? "kubernetes.io" : suffix,
    ...(metricsGroup ? { metrics: { group: metricsGroup.name, version: metricsGroup.preferredVersion.version } } : {}),
  };
}

export function find(d: Discovery, group: string, resource: string): Resource | undefined {
  return d.resources.find((r) => r.group === group && r.resource === resource);
}

/** The collection's URL path (namespace undefined: all namespaces, or a cluster-scoped kind). */
export function collectionPath(r: Pick<Resource, "group" | "version" | "resource" | "namespaced">, namespace?: string): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}` : `${base}/${r.resource}`;
}

export function objectPath(r: Pick<Resource, "group" | "version" | "resource" | "namespaced">, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

export function tableAccept(d: Discovery): string {
  return `application/json;as=Table;v=v1;g=${d.metaGroup}, application/json`;
}

export function apiVersionOf(r: Pick<Resource, "group" | "version">): string {
  return r.group === "" ? r.version : `${r.group}/${r.version}`;
}

/** The group suffix, read off the groups every profile serves under it (RBAC, CRDs, ...). */
export function suffixOf(groups: string[]): string {
  for (const prefix of ["rbac.authorization.", "apiextensions.", "authentication.", "authorization.", "admissionregistration."]) {
    const g = groups.find((n) => n.startsWith(prefix));
    if (g) return g.slice(prefix.length);
  }
  return "k8s.io";
}
