// Request bodies by Content-Type: one dispatch table from media type to
// decoder, for object bodies (POST, PUT) and patch bodies (PATCH, seed 000
// "Update mechanisms", "Media types and negotiation" 1). Each decoder returns
// the value and its duplicate keys for field validation. CBOR rows
// (application/cbor, application/apply-patch+cbor) exist only with the gate
// CBORServingAndStorage; Protobuf envelopes of built-in kinds are read in
// both spellings. Anything else is 415.

import type { SchemaRegistry } from "../../machinery/schema.js";
import { PROTOBUF_MEDIA_TYPES } from "../../machinery/naming.js";
import { badRequest, unsupportedMediaType } from "../../machinery/index.js";
import { parseJsonBody, parseYamlBody, type YamlDuplicateKey } from "../../machinery/decode/index.js";
import { CborError, decodeCbor } from "../../machinery/codec/cbor/index.js";
import { checkDepth, tooDeep } from "../../machinery/object-depth.js";
import { decodeEnvelope, isProtobufError, type TypeLookup } from "../../machinery/codec/protobuf/index.js";

export type PatchType = "json" | "merge" | "strategic" | "apply";

export interface DecodedBody {
  readonly value: unknown;
  /** Keys given twice: paths (JSON) or with their lines (YAML), as field validation reports them. CBOR refuses them; Protobuf cannot have them. */
  readonly duplicates: readonly (string | YamlDuplicateKey)[];
}

/** What the binary formats need: the CBOR gate, and the schemas that give Protobuf its field numbers. */
export interface BodyDecoding {
  /** Gate CBORServingAndStorage. */
  readonly cbor: boolean;
  readonly schemas: SchemaRegistry;
  /** Schema type of an envelope's apiVersion and kind. */
  readonly lookupType: TypeLookup;
}

type Decoder = (body: Buffer, options: BodyDecoding | undefined) => DecodedBody;

const json: Decoder = (body) => parseJsonBody(body);
const yaml: Decoder = (body) => {
  const parsed = parseYamlBody(body);
  return { value: parsed.value, duplicates: parsed.duplicateKeys };
};
/** Apply bodies are YAML, and JSON is YAML: JSON takes the faster parser (kubectl sends JSON). */
const yamlOrJson: Decoder = (body, options) => (firstByte(body) === 0x7b ? json(body, options) : yaml(body, options));

const cbor: Decoder = (body) => {
  try {
    return { value: checked(decodeCbor(body)), duplicates: [] };
  } catch (err) {
    if (err instanceof CborError) throw badRequest(`the body of the request was in an unknown format: ${err.message}`);
    throw err;
  }
};

const protobuf: Decoder = (body, options) => {
  if (options === undefined) throw unsupportedMediaType(OBJECT_TYPES);
  try {
    return { value: checked(decodeEnvelope(body, options.schemas, options.lookupType)), duplicates: [] };
  } catch (err) {
    if (isProtobufError(err)) throw badRequest(`the body of the request was in an unknown format: ${err.message}`);
    // A RawExtension's JSON (parsed natively) too deep for the stack.
    if (err instanceof RangeError) throw tooDeep();
    throw err;
  }
};

/** The binary formats' trees under the one nesting limit (JSON and YAML check theirs while parsing). */
function checked(value: unknown): unknown {
  checkDepth(value);
  return value;
}

interface Row {
  readonly decode: Decoder;
  /** Set for PATCH media types; object bodies have none. */
  readonly patch?: PatchType;
  /** Only with the CBOR gate on (upstream's 415 without it). */
  readonly cbor?: true;
}

const TABLE: ReadonlyMap<string, Row> = new Map<string, Row>([
  ["application/json", { decode: json }],
  ["application/yaml", { decode: yaml }],
  ...PROTOBUF_MEDIA_TYPES.map((type): [string, Row] => [type, { decode: protobuf }]),
  ["application/cbor", { decode: cbor, cbor: true }],
  ["application/json-patch+json", { decode: json, patch: "json" }],
  ["application/merge-patch+json", { decode: json, patch: "merge" }],
  ["application/strategic-merge-patch+json", { decode: json, patch: "strategic" }],
  ["application/apply-patch+yaml", { decode: yamlOrJson, patch: "apply" }],
  ["application/apply-patch+cbor", { decode: cbor, patch: "apply", cbor: true }],
]);

const OBJECT_TYPES = [...TABLE].filter(([, r]) => r.patch === undefined && !r.cbor).map(([t]) => t);
const PATCH_TYPES = [...TABLE].filter(([, r]) => r.patch !== undefined && !r.cbor).map(([t]) => t);

/** The row for a media type, when this server reads it. */
function rowFor(type: string, options: BodyDecoding | undefined): Row | undefined {
  const row = TABLE.get(type);
  return row?.cbor && options?.cbor !== true ? undefined : row;
}

/** The types a 415 lists: what this server reads for that kind of body. */
function accepted(patch: boolean, options: BodyDecoding | undefined): string[] {
  return [...TABLE].filter(([t, r]) => (r.patch !== undefined) === patch && rowFor(t, options) !== undefined).map(([t]) => t);
}

/** The media type of a Content-Type header, lower case, parameters dropped. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * A POST or PUT body. A missing Content-Type is JSON (kubectl's `scale
 * --current-replicas` sends none). Without `options` only the text formats are read.
 */
export function decodeObjectBody(contentType: string | undefined, body: Buffer, options?: BodyDecoding): DecodedBody {
  const type = mediaType(contentType) || "application/json";
  const row = rowFor(type, options);
  if (row === undefined || row.patch !== undefined) throw unsupportedMediaType(options === undefined ? OBJECT_TYPES : accepted(false, options));
  return row.decode(body, options);
}

/**
 * A PATCH body and its patch type, chosen by Content-Type alone. Kinds
 * without strategic merge (custom resources) refuse it with a 415, as upstream.
 */
export function decodePatchBody(contentType: string | undefined, body: Buffer, options?: BodyDecoding, strategicMerge = true): DecodedBody & { readonly patchType: PatchType } {
  const row = rowFor(mediaType(contentType), options);
  if (row?.patch === undefined || (row.patch === "strategic" && !strategicMerge)) {
    const types = options === undefined ? PATCH_TYPES : accepted(true, options);
    throw unsupportedMediaType(strategicMerge ? types : types.filter((t) => TABLE.get(t)?.patch !== "strategic"));
  }
  return { ...row.decode(body, options), patchType: row.patch };
}

function firstByte(body: Buffer): number | undefined {
  for (const b of body) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b;
  return undefined;
}
