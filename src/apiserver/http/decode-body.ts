// Request bodies by Content-Type (seed 000, "Media types and negotiation" 1):
// JSON (also when the header is missing, as kubectl's PUTs need), YAML, CBOR
// behind its gate, and Protobuf envelopes of built-in kinds; anything else is
// 415. Every decoder has size and nesting limits; the result is a plain
// object tree with the duplicate keys the text formats saw.

import type { SchemaRegistry } from "../../api/schema.js";
import { badRequest, unsupportedMediaType } from "../../machinery/index.js";
import { parseJsonBody, parseYamlBody } from "../../machinery/decode/index.js";
import { CborError, decodeCbor } from "../../machinery/codec/cbor/index.js";
import { decodeEnvelope, isProtobufError, type TypeLookup } from "../../machinery/codec/protobuf/index.js";
import { bodyFormat, supportedBodyTypes, type Format } from "./negotiation.js";

export interface DecodedBody {
  readonly value: unknown;
  readonly format: Format;
  /** Paths of keys given twice (JSON and YAML; CBOR rejects them, Protobuf cannot have them). */
  readonly duplicates: readonly string[];
}

export interface BodyDecoding {
  /** Gate CBORServingAndStorage. */
  readonly cbor: boolean;
  readonly schemas: SchemaRegistry;
  /** Schema type of an envelope's apiVersion and kind (Protobuf bodies). */
  readonly lookupType: TypeLookup;
}

/** Decodes `bytes` as the Content-Type says; 415 for a type we do not read, 400 for a body that is not what it claims. */
export function decodeBody(bytes: Buffer, contentType: string | undefined, options: BodyDecoding): DecodedBody {
  const format = bodyFormat(contentType, options);
  if (format === undefined) throw unsupportedMediaType(supportedBodyTypes(options));
  switch (format) {
    case "json": {
      const parsed = parseJsonBody(bytes);
      return { value: parsed.value, format, duplicates: parsed.duplicates };
    }
    case "yaml": {
      const parsed = parseYamlBody(bytes);
      return { value: parsed.value, format, duplicates: parsed.duplicates };
    }
    case "cbor":
      try {
        return { value: decodeCbor(bytes), format, duplicates: [] };
      } catch (err) {
        if (err instanceof CborError) throw badRequest(`the body of the request was in an unknown format: ${err.message}`);
        throw err;
      }
    case "protobuf":
      try {
        return { value: decodeEnvelope(bytes, options.schemas, options.lookupType), format, duplicates: [] };
      } catch (err) {
        if (isProtobufError(err)) throw badRequest(`the body of the request was in an unknown format: ${err.message}`);
        throw err;
      }
  }
}
