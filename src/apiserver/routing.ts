// URL paths of the resource API (seed 000, "Endpoints", "Paths"), parsed
// into what a request is about. Pure: the server maps the result to a
// resource declaration and a verb.
//   /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]
//   /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]
// A path that goes on after SUBRESOURCE (`nodes/N/proxy/healthz`) keeps the
// rest as it was sent, in `subpath`; only a proxy subresource serves one.

export interface ResourcePath {
  kind: "resource";
  group: string;
  version: string;
  /** Set when the path carries /namespaces/NS/ before the resource. */
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string | undefined;
  /** What follows SUBRESOURCE, still percent-encoded, with its leading "/" (and a trailing one when sent). */
  subpath?: string;
}

export type ParsedPath =
  | ResourcePath
  /** /api, /apis, /api/v1, /apis/GROUP, /apis/GROUP/VERSION */
  | { kind: "discovery"; group: string | undefined; version: string | undefined; legacy: boolean }
  | { kind: "other"; path: string };

export function parsePath(rawPath: string): ParsedPath {
  const path = rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.slice(0, -1) : rawPath;
  const parts = path.split("/").slice(1).map(safeDecode);
  if (parts.some((p) => p === undefined)) return { kind: "other", path };
  const segs = parts as string[];
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (segs[0] === "api") {
    if (segs.length === 1) return { kind: "discovery", group: "", version: undefined, legacy: true };
    group = "";
    version = segs[1];
    rest = segs.slice(2);
  } else if (segs[0] === "apis") {
    if (segs.length === 1) return { kind: "discovery", group: undefined, version: undefined, legacy: false };
    group = segs[1]!;
    version = segs[2];
    if (version === undefined) return { kind: "discovery", group, version: undefined, legacy: false };
    rest = segs.slice(3);
  } else {
    return { kind: "other", path };
  }
  if (rest.length === 0) return { kind: "discovery", group, version, legacy: group === "" };
  if (rest.some((s) => s === "")) return { kind: "other", path };

  let namespace: string | undefined;
  // "namespaces/NS/RESOURCE..." is a namespaced path; "namespaces[/NS[/status|finalize]]" is the namespaces resource itself.
  const namespaceSubresource = rest.length === 3 && (rest[2] === "status" || rest[2] === "finalize");
  if (rest[0] === "namespaces" && rest.length >= 3 && !namespaceSubresource) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  if (resource === undefined) return { kind: "other", path };
  if (extra.length > 0) {
    // The raw segments after SUBRESOURCE: as many from the end of the path as `extra` counts.
    const raw = rawPath.split("/");
    const kept = raw.slice(raw.length - extra.length - (rawPath.endsWith("/") ? 1 : 0)).join("/");
    return { kind: "resource", group, version: version!, namespace, resource, name, subresource, subpath: `/${kept}` };
  }
  return { kind: "resource", group, version: version!, namespace, resource, name, subresource };
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
