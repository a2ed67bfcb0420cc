// Request bodies by Content-Type: one dispatch table from media type to
// decoder, for object bodies (POST, PUT) and patch bodies (PATCH, seed 000
// "Update mechanisms"). Each decoder returns the value and its duplicate keys
// for field validation. CBOR and Protobuf bodies are added as rows here.

import { unsupportedMediaType } from "../../machinery/index.js";
import { parseJsonBody, parseYamlBody, type YamlDuplicateKey } from "../../machinery/decode/index.js";

export type PatchType = "json" | "merge" | "strategic" | "apply";

export interface DecodedBody {
  readonly value: unknown;
  /** Keys given twice: paths (JSON) or with their lines (YAML), as field validation reports them. */
  readonly duplicates: readonly (string | YamlDuplicateKey)[];
}

type Decoder = (body: Buffer) => DecodedBody;

const json: Decoder = (body) => parseJsonBody(body);
const yaml: Decoder = (body) => {
  const parsed = parseYamlBody(body);
  return { value: parsed.value, duplicates: parsed.duplicateKeys };
};
/** Apply bodies are YAML, and JSON is YAML: JSON takes the faster parser (kubectl sends JSON). */
const yamlOrJson: Decoder = (body) => (firstByte(body) === 0x7b ? json(body) : yaml(body));

interface Row {
  readonly decode: Decoder;
  /** Set for PATCH media types; object bodies have none. */
  readonly patch?: PatchType;
}

const TABLE: ReadonlyMap<string, Row> = new Map<string, Row>([
  ["application/json", { decode: json }],
  ["application/yaml", { decode: yaml }],
  ["application/json-patch+json", { decode: json, patch: "json" }],
  ["application/merge-patch+json", { decode: json, patch: "merge" }],
  ["application/strategic-merge-patch+json", { decode: json, patch: "strategic" }],
  ["application/apply-patch+yaml", { decode: yamlOrJson, patch: "apply" }],
  // application/apply-patch+cbor (and application/cbor) come with the CBOR feature gate; until then
  // they get upstream's 415 for a server without CBOR, which lists the types above.
]);

const OBJECT_TYPES = [...TABLE].filter(([, r]) => r.patch === undefined).map(([t]) => t);
const PATCH_TYPES = [...TABLE].filter(([, r]) => r.patch !== undefined).map(([t]) => t);

/** The media type of a Content-Type header, lower case, parameters dropped. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** A POST or PUT body. A missing Content-Type is JSON (kubectl's `scale --current-replicas` sends none). */
export function decodeObjectBody(contentType: string | undefined, body: Buffer): DecodedBody {
  const type = mediaType(contentType) || "application/json";
  const row = TABLE.get(type);
  if (row === undefined || row.patch !== undefined) throw unsupportedMediaType(OBJECT_TYPES);
  return row.decode(body);
}

/** A PATCH body and its patch type, chosen by Content-Type alone. */
export function decodePatchBody(contentType: string | undefined, body: Buffer): DecodedBody & { readonly patchType: PatchType } {
  const row = TABLE.get(mediaType(contentType));
  if (row?.patch === undefined) throw unsupportedMediaType(PATCH_TYPES);
  return { ...row.decode(body), patchType: row.patch };
}

function firstByte(body: Buffer): number | undefined {
  for (const b of body) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b;
  return undefined;
}
