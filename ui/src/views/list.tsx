// Any kind's objects as the API's Table (the kind's own columns, custom kinds
// included), following a watch.

import { useState } from "preact/hooks";
import type { Discovery, Resource } from "../discovery.js";
import { find } from "../discovery.js";
import { useLiveTable } from "../live.js";
import { ErrorBox, mainColumns, Section, VirtualTable, type Row } from "../components.js";
import { listHref, objectHref } from "../router.js";

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export function KindTable({ d, r, namespace, title, query, maxHeight }: { d: Discovery; r: Resource | undefined; namespace: string | undefined; title?: string; query?: Record<string, string>; maxHeight?: number }) {
  const live = useLiveTable(d, r, r?.namespaced ? namespace : undefined, query);
  const [filter, setFilter] = useState("");
  if (r === undefined) return null;
  const cols = mainColumns(live.columns);
  const showNamespace = r.namespaced && namespace === undefined;
  const rows: Row[] = live.rows
    .filter((row) => filter === "" || (row.object?.metadata.name ?? "").includes(filter))
    .map((row) => {
      const m = row.object?.metadata;
      return {
        key: m?.uid ?? `${m?.namespace}/${m?.name}`,
        cells: [...(showNamespace ? [m?.namespace ?? ""] : []), ...cols.map((i) => cellText(row.cells[i]))],
        ...(m ? { href: objectHref(r.group, r.resource, m.namespace, m.name) } : {}),
      };
    });
  const heading = `${title ?? r.kind} (${live.loaded ? rows.length : "…"})`;
  return (
    <Section
      title={heading}
      actions={
        <>
          <input class="filter" placeholder="filter by name" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} aria-label={`filter ${r.resource}`} />
          <a href={listHref(r.group, r.resource)}>{r.group === "" ? r.resource : `${r.resource}.${r.group}`}</a>
        </>
      }
    >
      <ErrorBox message={live.error} />
      <div class="kind-table" data-resource={`${r.resource}.${r.group}`}>
        <VirtualTable columns={[...(showNamespace ? ["Namespace"] : []), ...cols.map((i) => live.columns[i]!.name)]} rows={rows} {...(maxHeight ? { maxHeight } : {})} empty={live.loaded ? "No objects." : "Loading…"} />
      </div>
    </Section>
  );
}

export function ListView({ d, group, resource, namespace }: { d: Discovery; group: string; resource: string; namespace: string | undefined }) {
  const r = find(d, group, resource);
  if (r === undefined) return <ErrorBox message={`the server does not serve ${resource}${group ? `.${group}` : ""}`} />;
  return <KindTable d={d} r={r} namespace={namespace} />;
}

/** Every kind the server serves (discovery), custom kinds included. */
export function KindsView({ d }: { d: Discovery }) {
  const [filter, setFilter] = useState("");
  const f = filter.toLowerCase();
  const rs = d.resources
    .filter((r) => r.verbs.includes("list"))
    .filter((r) => f === "" || r.kind.toLowerCase().includes(f) || r.resource.includes(f) || r.group.includes(f) || r.shortNames.includes(f))
    .sort((a, b) => a.group.localeCompare(b.group) || a.kind.localeCompare(b.kind));
  const rows: Row[] = rs.map((r) => ({
    key: `${r.group}/${r.resource}`,
    cells: [<a href={listHref(r.group, r.resource)}>{r.kind}</a>, r.resource, r.group || "core", r.version, r.namespaced ? "Namespaced" : "Cluster", r.shortNames.join(",")],
    href: listHref(r.group, r.resource),
  }));
  return (
    <Section title={`Kinds (${rs.length})`} actions={<input class="filter" placeholder="filter kinds" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} aria-label="filter kinds" />}>
      <VirtualTable columns={["Kind", "Resource", "Group", "Version", "Scope", "Short names"]} rows={rows} maxHeight={2000} />
    </Section>
  );
}
