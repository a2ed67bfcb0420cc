// CBOR codec for API objects (seed 000, "Media types and negotiation": application/cbor,
// application/cbor-seq). Pure: negotiation and gates live in src/apiserver.

export { CBOR_SELF_DESCRIBED, MAX_CBOR_DEPTH, CborError, encodeCbor, decodeCbor, decodeCborSequence, isSelfDescribedCbor } from "./cbor.js";
