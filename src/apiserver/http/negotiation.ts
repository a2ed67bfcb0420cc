// Content negotiation (seed 000, "Media types and negotiation"): parse the
// Accept header's media ranges (parameters, q values, wildcards) and pick the
// first representation we serve; 406 when none. Table and metadata-only
// forms are asked for with `as=...;g=meta.<suffix>;v=...`, in orch's and in
// upstream's spelling.

import { notAcceptable } from "../../machinery/index.js";
import { META_GROUPS } from "../../api/naming.js";

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

export type Representation =
  | { as: "object"; mediaType: "application/json" }
  | { as: "Table"; mediaType: "application/json"; version: string; group: string }
  | { as: "PartialObjectMetadata" | "PartialObjectMetadataList"; mediaType: "application/json"; version: string; group: string };

export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === "") return [{ type: "*", subtype: "*", params: {}, q: 1 }];
  const ranges: MediaRange[] = [];
  for (const part of header.split(",")) {
    const [typePart, ...paramParts] = part.split(";");
    const [type, subtype] = (typePart ?? "").trim().toLowerCase().split("/");
    if (!type || !subtype) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of paramParts) {
      const eq = p.indexOf("=");
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
      if (key === "q") q = Number(value);
      else params[key] = value;
    }
    if (!(q > 0)) continue;
    ranges.push({ type, subtype, params, q });
  }
  // Stable sort by q: among equals, the client's order wins.
  return ranges.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i).map(({ r }) => r);
}

const TABLE_VERSIONS = new Set(["v1", "v1beta1"]);
const SUPPORTED = [
  "application/json",
  "application/json;as=Table;v=v1;g=meta.orch.io",
  "application/json;as=PartialObjectMetadata;v=v1;g=meta.orch.io",
  "application/json;as=PartialObjectMetadataList;v=v1;g=meta.orch.io",
];

/** The representation for a get/list/watch response; `list` selects which metadata-only kind fits. */
export function negotiate(accept: string | undefined, options: { list: boolean }): Representation {
  for (const range of parseAccept(accept)) {
    const json = (range.type === "application" && range.subtype === "json") || (range.type === "*" && range.subtype === "*") || (range.type === "application" && range.subtype === "*");
    if (!json) continue;
    const as = range.params["as"];
    if (as === undefined) return { as: "object", mediaType: "application/json" };
    const group = range.params["g"] ?? "";
    const version = range.params["v"] ?? "";
    if (!META_GROUPS.includes(group)) continue;
    if (as === "Table" && TABLE_VERSIONS.has(version)) return { as: "Table", mediaType: "application/json", version, group };
    if (version !== "v1" && version !== "v1beta1") continue;
    if (as === "PartialObjectMetadata" && !options.list) return { as, mediaType: "application/json", version, group };
    if (as === "PartialObjectMetadataList" && options.list) return { as, mediaType: "application/json", version, group };
    if (as === "PartialObjectMetadata" && options.list) return { as: "PartialObjectMetadataList", mediaType: "application/json", version, group };
  }
  throw notAcceptable(SUPPORTED);
}
