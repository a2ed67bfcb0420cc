// JSON objects ⇄ upstream's Protobuf messages, driven by the schemas (no .proto
// files): each type compiles once into a field table (plan.ts), and encode.ts /
// decode.ts walk those tables. This module is the codec that owns the tables of
// one schema registry and the writer it reuses.

import type { SchemaRegistry } from "../../schema.js";
import { decodeMessageBody } from "./decode.js";
import { encodeBody } from "./encode.js";
import { compile, type JsonObject, type MessagePlan } from "./plan.js";
import { Reader, Writer } from "./wire.js";

export type { JsonObject } from "./plan.js";

/**
 * Encodes and decodes the types of one schema registry. Tables are compiled
 * on first use of a type; one writer is reused (encoding is synchronous).
 */
export class ProtobufCodec {
  readonly #registry: SchemaRegistry;
  readonly #plans = new Map<string, MessagePlan>();
  #writer = new Writer(4096);

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  #plan(typeName: string): MessagePlan {
    return this.#plans.get(typeName) ?? compile(this.#registry, typeName, this.#plans);
  }

  /** Compiles the tables of these types now (and of all they reach), so first requests do not pay for it. */
  precompile(...typeNames: string[]): void {
    for (const name of typeNames) this.#plan(name);
  }

  /** The message bytes of `obj` as type `typeName` (no envelope). Unknown JSON fields are dropped. */
  encode(obj: object, typeName: string): Uint8Array {
    const w = this.#start();
    this.encodeTo(w, obj, typeName);
    return this.#finish(w);
  }

  /** Writes the message body of `obj` into `w` (for the envelope, which frames it). */
  encodeTo(w: Writer, obj: object, typeName: string): void {
    encodeBody(w, obj as JsonObject, this.#plan(typeName));
  }

  /** A fresh start on the shared writer. */
  #start(): Writer {
    const w = this.#writer;
    w.pos = 0;
    return w;
  }

  #finish(w: Writer): Uint8Array {
    const out = w.finish();
    // Do not hold on to the buffer of one huge list for the life of the process.
    if (w.buf.length > 4 << 20) this.#writer = new Writer(4096);
    return out;
  }

  /** Runs `write` with the shared writer and returns the bytes written. */
  write(write: (w: Writer) => void): Uint8Array {
    const w = this.#start();
    write(w);
    return this.#finish(w);
  }

  /** The JSON object for message bytes of type `typeName`; `head` (apiVersion, kind) becomes its first keys. */
  decode(bytes: Uint8Array, typeName: string, head?: JsonObject): JsonObject {
    const plan = this.#plan(typeName);
    return decodeMessageBody(new Reader(bytes), plan, head);
  }

  /** Like decode, for the bytes between `start` and `end` of `bytes` (no copy). */
  decodeRange(bytes: Uint8Array, start: number, end: number, typeName: string, head?: JsonObject): JsonObject {
    const plan = this.#plan(typeName);
    return decodeMessageBody(new Reader(bytes, start, end), plan, head);
  }
}

const codecs = new WeakMap<SchemaRegistry, ProtobufCodec>();

/** The codec of a registry, created once. */
export function codecFor(registry: SchemaRegistry): ProtobufCodec {
  let codec = codecs.get(registry);
  if (codec === undefined) codecs.set(registry, (codec = new ProtobufCodec(registry)));
  return codec;
}

/** Message bytes of `obj` as `typeName`, no envelope. */
export function encodeMessage(obj: object, typeName: string, registry: SchemaRegistry): Uint8Array {
  return codecFor(registry).encode(obj, typeName);
}

/** The JSON object of message bytes of type `typeName`, no envelope. */
export function decodeMessage(bytes: Uint8Array, typeName: string, registry: SchemaRegistry): JsonObject {
  return codecFor(registry).decode(bytes, typeName);
}
