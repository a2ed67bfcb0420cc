// Legacy discovery, as upstream serves it: /api, /apis and every group
// version's APIResourceList, flattened to one entry per resource and version,
// its subresources (seed 000, "Paths") gathered under it.

import type { DiscoveredResource } from "./types.js";

interface RawApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** Every resource the server serves; `get` fetches one discovery document (JSON). */
export async function discoverResources(get: <T>(path: string) => Promise<T>): Promise<DiscoveredResource[]> {
  const core = await get<{ versions?: string[] }>("/api");
  const groups = await get<{ groups?: { name: string; versions: { version: string }[]; preferredVersion?: { version: string } }[] }>("/apis");
  const wanted: { group: string; version: string; preferred: boolean }[] = [];
  (core.versions ?? []).forEach((version, i) => wanted.push({ group: "", version, preferred: i === 0 }));
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.version ?? g.versions[0]?.version;
    for (const v of g.versions) wanted.push({ group: g.name, version: v.version, preferred: v.version === preferred });
  }
  const lists = await Promise.all(
    wanted.map(async (w) => ({ ...w, list: await get<{ resources?: RawApiResource[] }>(w.group === "" ? `/api/${w.version}` : `/apis/${w.group}/${w.version}`) })),
  );
  const out: DiscoveredResource[] = [];
  for (const { group, version, preferred, list } of lists) {
    const entries = list.resources ?? [];
    for (const r of entries) {
      if (r.name.includes("/")) continue;
      const subresources = entries
        .filter((s) => s.name.startsWith(`${r.name}/`))
        .map((s) => ({ name: s.name.slice(r.name.length + 1), verbs: s.verbs ?? [] }));
      out.push({
        group,
        version,
        resource: r.name,
        namespaced: r.namespaced,
        kind: r.kind,
        singularName: r.singularName ?? "",
        verbs: r.verbs ?? [],
        shortNames: r.shortNames ?? [],
        categories: r.categories ?? [],
        subresources,
        preferred,
      });
    }
  }
  return out;
}
