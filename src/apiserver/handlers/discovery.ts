// Discovery (KUBECTL.md, "Discovery"): the legacy documents (APIVersions,
// APIGroupList, APIGroup, APIResourceList) and aggregated discovery
// (APIGroupDiscoveryList, v2 and v2beta1) when the Accept header asks for it,
// answered with exactly the Content-Type asked for. Built once per server.

import { ALL_VERBS, subresourcesAt, type ResourceDefinition } from "../../api/resource.js";
import type { ApiRegistry } from "../api-registry.js";
import { parseAccept } from "../../machinery/negotiation.js";

const DISCOVERY_GROUPS = ["apidiscovery.k8s.io", "apidiscovery.orch.io"];

/** A resource of an extension API server's APIResourceList (the aggregation layer fetches them). */
export interface RemoteResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  group?: string;
  version?: string;
  kind?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** A group served by extension API servers, as discovery lists it: versions preferred first; resources undefined until first fetched. */
export interface RemoteGroup {
  readonly name: string;
  readonly versions: readonly { readonly version: string; readonly available: boolean; readonly resources: readonly RemoteResource[] | undefined }[];
}

export interface DiscoveryAnswer {
  contentType: string;
  body: unknown;
}

function gv(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}

function verbsOf(def: ResourceDefinition): string[] {
  return [...(def.verbs ?? ALL_VERBS)].sort();
}

interface SubresourceInfo {
  name: string;
  kind: { group: string; version: string; kind: string };
  verbs: string[];
}

/** The kind's subresource declarations as discovery lists them, in the kind's order. */
function subresources(def: ResourceDefinition, version: string): SubresourceInfo[] {
  return subresourcesAt(def, version).map((s) => ({
    name: s.name,
    kind: s.responseKind ?? { group: def.group, version, kind: def.kind },
    verbs: [...s.verbs],
  }));
}

export class Discovery {
  readonly #registry: ApiRegistry;
  readonly #cache = new Map<string, DiscoveryAnswer>();
  /** The aggregation layer's remote groups (listed after the served ones). */
  readonly #remote: () => readonly RemoteGroup[];

  constructor(registry: ApiRegistry, remote: () => readonly RemoteGroup[] = () => []) {
    this.#registry = registry;
    this.#remote = remote;
  }

  /** The served resources changed (a custom resource came or went): answers are built anew. */
  invalidate(): void {
    this.#cache.clear();
  }

  /**
   * The answer for a discovery path, or undefined for an unknown group or
   * version. `legacy` is true for /api and /api/v1.
   */
  answer(path: { group: string | undefined; version: string | undefined; legacy: boolean }, accept: string | undefined): DiscoveryAnswer | undefined {
    const aggregated = path.version === undefined && (path.group === undefined || path.legacy) ? wantsAggregated(accept) : undefined;
    const key = `${path.legacy}|${path.group}|${path.version}|${aggregated?.contentType ?? ""}`;
    let answer = this.#cache.get(key);
    if (answer === undefined) {
      answer = this.#build(path, aggregated);
      if (answer !== undefined) this.#cache.set(key, answer);
    }
    return answer;
  }

  #build(path: { group: string | undefined; version: string | undefined; legacy: boolean }, aggregated: { contentType: string; version: string } | undefined): DiscoveryAnswer | undefined {
    const groups = this.#registry.groups();
    if (aggregated !== undefined) {
      const selected = groups.filter((g) => (path.legacy ? g.name === "" : g.name !== ""));
      const body = this.#aggregated(selected, aggregated.version) as { items: unknown[] };
      if (!path.legacy) body.items.push(...remoteAggregated(this.#remote(), groups));
      return { contentType: aggregated.contentType, body };
    }
    const json = (body: unknown): DiscoveryAnswer => ({ contentType: "application/json", body });
    if (path.legacy && path.version === undefined) {
      return json({ kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "" }] });
    }
    if (path.group === undefined) {
      const remote = this.#remote().filter((r) => !groups.some((g) => g.name === r.name)).map((r) => ({ name: r.name, versions: r.versions.map((v) => v.version) }));
      return json({ kind: "APIGroupList", apiVersion: "v1", groups: [...groups.filter((g) => g.name !== ""), ...remote].map(apiGroup) });
    }
    const group = groups.find((g) => g.name === path.group);
    if (group === undefined) return undefined;
    if (path.version === undefined) return json({ kind: "APIGroup", apiVersion: "v1", ...apiGroup(group) });
    if (!group.versions.includes(path.version)) return undefined;
    return json({
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: gv(group.name, path.version),
      resources: this.#registry.resourcesIn(group.name, path.version).flatMap((def) => apiResources(def, path.version!)),
    });
  }

  #aggregated(groups: { name: string; versions: string[] }[], discoveryVersion: string): unknown {
    return {
      kind: "APIGroupDiscoveryList",
      apiVersion: `apidiscovery.k8s.io/${discoveryVersion}`,
      metadata: {},
      items: groups.map((g) => ({
        metadata: { name: g.name, creationTimestamp: null },
        versions: g.versions.map((version) => ({
          version,
          resources: this.#registry.resourcesIn(g.name, version).map((def) => ({
            resource: def.resource,
            responseKind: { group: def.group, version, kind: def.kind },
            scope: def.namespaced ? "Namespaced" : "Cluster",
            singularResource: def.singular,
            verbs: verbsOf(def),
            ...(def.shortNames?.length ? { shortNames: def.shortNames } : {}),
            ...(def.categories?.length ? { categories: def.categories } : {}),
            ...(def.subresources
              ? {
                  subresources: subresources(def, version).map((s) => ({ subresource: s.name, responseKind: s.kind, verbs: s.verbs })),
                }
              : {}),
          })),
          freshness: "Current",
        })),
      })),
    };
  }
}

function apiGroup(g: { name: string; versions: string[] }): Record<string, unknown> {
  const versions = g.versions.map((version) => ({ groupVersion: gv(g.name, version), version }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

function apiResources(def: ResourceDefinition, version: string): unknown[] {
  const main = {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: verbsOf(def),
    ...(def.shortNames?.length ? { shortNames: def.shortNames } : {}),
    ...(def.categories?.length ? { categories: def.categories } : {}),
  };
  const subs = subresources(def, version).map((s) => ({
    name: `${def.resource}/${s.name}`,
    singularName: "",
    namespaced: def.namespaced,
    ...(s.kind.group !== def.group || s.kind.kind !== def.kind ? { group: s.kind.group, version: s.kind.version } : {}),
    kind: s.kind.kind,
    verbs: s.verbs,
  }));
  return [main, ...subs];
}

/**
 * Remote groups in aggregated discovery (groups served here win): each
 * version with the resources its server listed at the last check (its
 * subresources folded in), Stale once the server stopped answering.
 */
function remoteAggregated(remote: readonly RemoteGroup[], local: readonly { name: string }[]): unknown[] {
  return remote.filter((r) => !local.some((g) => g.name === r.name)).map((r) => ({
    metadata: { name: r.name, creationTimestamp: null },
    versions: r.versions.filter((v) => v.resources !== undefined).map((v) => ({
      version: v.version,
      resources: aggregatedResources(r.name, v.version, v.resources!),
      freshness: v.available ? "Current" : "Stale",
    })),
  }));
}

function aggregatedResources(group: string, version: string, list: readonly RemoteResource[]): unknown[] {
  const kindOf = (r: RemoteResource) => ({ group: r.group ?? group, version: r.version ?? version, kind: r.kind ?? "" });
  return list.filter((r) => !r.name.includes("/")).map((r) => {
    const subs = list.filter((s) => s.name.startsWith(`${r.name}/`));
    return {
      resource: r.name,
      responseKind: kindOf(r),
      scope: r.namespaced ? "Namespaced" : "Cluster",
      singularResource: r.singularName ?? "",
      verbs: r.verbs ?? [],
      ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}),
      ...(r.categories?.length ? { categories: r.categories } : {}),
      ...(subs.length > 0 ? { subresources: subs.map((s) => ({ subresource: s.name.slice(r.name.length + 1), responseKind: kindOf(s), verbs: s.verbs ?? [] })) } : {}),
    };
  });
}

/** The aggregated-discovery media range the client asked for, if any (first match wins). */
function wantsAggregated(accept: string | undefined): { contentType: string; version: string } | undefined {
  for (const range of parseAccept(accept)) {
    if (range.type !== "application" || range.subtype !== "json") continue;
    const { as, g, v } = range.params;
    if (as === "APIGroupDiscoveryList" && g !== undefined && DISCOVERY_GROUPS.includes(g) && (v === "v2" || v === "v2beta1")) {
      return { contentType: `application/json;g=${g};v=${v};as=APIGroupDiscoveryList`, version: v };
    }
    if (range.params["as"] === undefined) return undefined;
  }
  return undefined;
}
