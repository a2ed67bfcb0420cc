// Content negotiation (seed 000, "Media types and negotiation"): parse the
// Accept header's media ranges (parameters, q values, wildcards) and pick the
// first representation served: a format (JSON, YAML, CBOR behind its gate,
// Protobuf where the kind has a Protobuf form) and a target (the object, a
// Table, or metadata only, asked for with `as=...;g=meta.<suffix>;v=...` in
// orch's or upstream's spelling, in any format: rule 3). 406 when none fits.
// Request bodies are dispatched by Content-Type in decode-body.ts.

import { notAcceptable } from "./index.js";
import { META_GROUPS, PROTOBUF_MEDIA_TYPES } from "./naming.js";

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

export type Format = "json" | "yaml" | "cbor" | "protobuf";
export type Target = "object" | "Table" | "PartialObjectMetadata" | "PartialObjectMetadataList";

export interface Representation {
  format: Format;
  as: Target;
  /** The meta group and version a Table or metadata-only target was asked in ("" for objects). */
  group: string;
  version: string;
  /** The response's Content-Type: the media type asked for (Protobuf keeps the client's spelling) with the target's parameters. */
  contentType: string;
}

export interface NegotiateOptions {
  /** A list (collection) response: metadata-only means PartialObjectMetadataList. */
  list: boolean;
  /** A watch: CBOR answers as `application/cbor-seq`, Protobuf as `;stream=watch`. */
  watch?: boolean;
  /** Gate CBORServingAndStorage. */
  cbor: boolean;
  /** The kind has a Protobuf form (built-in kinds; never custom resources, rule 2). */
  protobuf: boolean;
}

export function parseMediaRange(part: string): MediaRange | undefined {
  const [typePart, ...paramParts] = part.split(";");
  const [type, subtype, extra] = (typePart ?? "").trim().toLowerCase().split("/");
  if (!type || !subtype || extra !== undefined) return undefined;
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
  return { type, subtype, params, q: Number.isFinite(q) ? q : 0 };
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === "") return [{ type: "*", subtype: "*", params: {}, q: 1 }];
  const ranges: MediaRange[] = [];
  for (const part of header.split(",")) {
    const range = parseMediaRange(part);
    if (range !== undefined && range.q > 0) ranges.push(range);
  }
  // Stable sort by q: among equals, the client's order wins.
  return ranges.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i).map(({ r }) => r);
}

const BASE_TYPE: Record<Format, string> = { json: "application/json", yaml: "application/yaml", cbor: "application/cbor", protobuf: PROTOBUF_MEDIA_TYPES[0]! };
const TARGET_VERSIONS = new Set(["v1", "v1beta1"]);

/** The format a media range names, or undefined; wildcards mean JSON. */
function formatOf(range: MediaRange, options: NegotiateOptions): { format: Format; mediaType: string } | undefined {
  const mediaType = `${range.type}/${range.subtype}`;
  if (mediaType === "*/*" || mediaType === "application/*" || mediaType === "application/json") return { format: "json", mediaType: "application/json" };
  if (mediaType === "application/yaml") return { format: "yaml", mediaType };
  if (mediaType === "application/cbor" || (options.watch && mediaType === "application/cbor-seq")) {
    return options.cbor ? { format: "cbor", mediaType: "application/cbor" } : undefined;
  }
  if (PROTOBUF_MEDIA_TYPES.includes(mediaType)) return options.protobuf ? { format: "protobuf", mediaType } : undefined;
  return undefined;
}

/** The conversion target a range's `as`, `g` and `v` ask for, or undefined when we do not serve it. */
function targetOf(range: MediaRange, options: NegotiateOptions): { as: Target; group: string; version: string } | undefined {
  const as = range.params["as"];
  if (as === undefined || as === "") return { as: "object", group: "", version: "" };
  const group = range.params["g"] ?? "";
  const version = range.params["v"] ?? "";
  if (!META_GROUPS.includes(group) || !TARGET_VERSIONS.has(version)) return undefined;
  if (as === "Table") return { as, group, version };
  if (as === "PartialObjectMetadata") return { as: options.list ? "PartialObjectMetadataList" : as, group, version };
  if (as === "PartialObjectMetadataList" && options.list) return { as, group, version };
  // A watch of a collection asked as a list: each event carries one object's metadata (client-go's metadata informers ask so).
  if (as === "PartialObjectMetadataList" && options.watch) return { as: "PartialObjectMetadata", group, version };
  return undefined;
}

/** The Content-Type header of a response in `rep`'s format and target. */
function contentTypeOf(format: Format, mediaType: string, target: { as: Target; group: string; version: string }, watch: boolean): string {
  let type = mediaType;
  if (watch && format === "cbor") type = "application/cbor-seq";
  if (target.as !== "object") type += `;as=${target.as};g=${target.group};v=${target.version}`;
  if (watch && format === "protobuf") type += ";stream=watch";
  return type;
}

/**
 * Answers by Accept header and options: clients send the same few headers
 * on every request, and parsing one was 1 % of a create's CPU. Bounded: a
 * client inventing headers only empties it.
 */
const NEGOTIATED = new Map<string, Representation>();
const MAX_NEGOTIATED = 512;

/** The representation of a get, list or watch response (and of the objects writes return). */
export function negotiate(accept: string | undefined, options: NegotiateOptions): Representation {
  const key = `${options.list ? 1 : 0}${options.watch ? 1 : 0}${options.cbor ? 1 : 0}${options.protobuf ? 1 : 0}${accept ?? ""}`;
  let rep = NEGOTIATED.get(key);
  if (rep === undefined) {
    rep = Object.freeze(negotiateOnce(accept, options));
    if (NEGOTIATED.size >= MAX_NEGOTIATED) NEGOTIATED.clear();
    NEGOTIATED.set(key, rep);
  }
  return rep;
}

function negotiateOnce(accept: string | undefined, options: NegotiateOptions): Representation {
  for (const range of parseAccept(accept)) {
    const format = formatOf(range, options);
    if (format === undefined) continue;
    const target = targetOf(range, options);
    if (target === undefined) continue;
    return { format: format.format, ...target, contentType: contentTypeOf(format.format, format.mediaType, target, options.watch === true) };
  }
  throw notAcceptable(supportedTypes(options));
}

/** What a 406 lists: every media type this request could have had. */
export function supportedTypes(options: NegotiateOptions): string[] {
  const formats: Format[] = ["json", "yaml"];
  if (options.cbor) formats.push("cbor");
  if (options.protobuf) formats.push("protobuf");
  return formats.map((f) => (options.watch && f === "cbor" ? "application/cbor-seq" : BASE_TYPE[f]));
}

/**
 * The representation of an error's Status: the client's format when it named
 * one we can write a Status in, JSON otherwise (also when negotiation itself failed).
 */
export function errorRepresentation(accept: string | undefined, options: { cbor: boolean; protobuf: boolean }): Representation {
  try {
    const rep = negotiate(accept, { list: false, ...options });
    return { ...rep, as: "object", group: "", version: "", contentType: rep.contentType.split(";")[0]! };
  } catch {
    return { format: "json", as: "object", group: "", version: "", contentType: "application/json" };
  }
}
