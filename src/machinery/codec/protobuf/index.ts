// The Protobuf codec: built-in objects in upstream's Protobuf wire format, driven
// by the schemas (seed 000, "Protobuf envelope", "Media types and negotiation").
// Pure: negotiation and HTTP live in src/apiserver; this only maps bytes ⇄ JSON objects.

export type { JsonObject } from "./message.js";
export { ProtobufCodec, codecFor, encodeMessage, decodeMessage } from "./message.js";
export type { Envelope, TypeLookup, WatchEventObject } from "./envelope.js";
export {
  PROTOBUF_MAGIC,
  STATUS_TYPE,
  hasProtobufMagic,
  encodeEnvelope,
  listEnvelopeParts,
  encodeListEnvelope,
  listItemPrefix,
  readEnvelope,
  decodeEnvelope,
  encodeWatchEvent,
  encodeWatchFrame,
  decodeWatchEvent,
  decodeWatchStream,
  WatchFrameReader,
} from "./envelope.js";
export { ProtobufError, isProtobufError } from "./wire.js";
export { POINTER_SCALARS } from "./presence.js";
