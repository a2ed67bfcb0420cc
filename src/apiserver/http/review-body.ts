// The body of a review (TokenReview, SelfSubjectReview, the access reviews):
// created, answered and never stored, so no stored-kind handler reads it.
// JSON, YAML, CBOR (with its gate) or Protobuf: client-go clients such as
// upstream's conformance suite and `kubectl auth can-i` send Protobuf, with
// field numbers from the review's own schema type. The kind and apiVersion,
// when given, must be the request's (a 400 otherwise, as upstream's decoder).

import { badRequest } from "../../machinery/index.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { observeRequestObject, readBody } from "./body.js";
import { decodeObjectBody } from "./decode-body.js";
import type { Incoming } from "./respond.js";

/** What the binary formats need to read a review. */
export interface ReviewDecoding {
  /** The schemas that give Protobuf bodies their field numbers. */
  readonly schemas: SchemaRegistry;
  /** Gate CBORServingAndStorage. */
  readonly cbor: boolean;
}

/** The review sent, as an object (undefined when the body is empty); `typeName` is its schema type. */
export async function readReviewBody(req: Incoming, decoding: ReviewDecoding, apiVersion: string, kind: string, typeName: string): Promise<Record<string, unknown> | undefined> {
  const bytes = await readBody(req);
  if (bytes.length === 0) return undefined;
  const lookupType = (v: string, k: string) => (v === apiVersion && k === kind ? typeName : undefined);
  // A server built without the review's group has no field numbers for it: text formats only (415 for the rest).
  const binary = decoding.schemas.get(typeName) !== undefined ? { ...decoding, lookupType } : undefined;
  const { value } = decodeObjectBody(req.headers["content-type"], bytes, binary);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw badRequest(`the body of a ${kind} must be an object`);
  observeRequestObject(req, value);
  const sent = value as { kind?: unknown; apiVersion?: unknown };
  if (sent.kind !== undefined && sent.kind !== kind) throw badRequest(`the body is a ${JSON.stringify(sent.kind)}, not a ${kind}`);
  if (sent.apiVersion !== undefined && sent.apiVersion !== apiVersion) {
    throw badRequest(`the body's apiVersion ${JSON.stringify(sent.apiVersion)} does not match the request's ${JSON.stringify(apiVersion)}`);
  }
  return value as Record<string, unknown>;
}
