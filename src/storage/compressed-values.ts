// Values on etcd, compressed: raw deflate primed with one of orch's
// dictionaries (./dictionary.ts). etcd keeps every write of its last
// snapshot interval in memory (100,000 entries by default), and its
// database's pages of the versions not yet compacted, so a pod's JSON
// (3-4 KB) costs it that much several times over; compressed it is near
// 800 bytes. lmdb stores compress their log themselves (format 2).
//
// Stored form: NUL, "z", the dictionary's number (one byte), then the
// deflate stream. No stored object starts with NUL (JSON starts with "{",
// CBOR with its tag, upstream's Protobuf with "k8s", encrypted values with
// "k8s:enc:"), so a value read without that header is returned as it is:
// values written before compression was turned on, or by a server with
// `--etcd-compression=false`, read as always.
//
// Left as they are: values encrypted at rest (they do not compress, and
// compressing a secret beside text a client chose can leak its length),
// values too small to gain, and values past the backend's size limit, which
// the backend refuses as before: the limit is the object's, not its
// compressed form's.

import { deflateRawSync, inflateRawSync } from "node:zlib";
import { VALUE_DICTIONARIES } from "./dictionary.js";
import { ownBytes } from "./bytes.js";
import { MAX_VALUE_BYTES } from "./storage.js";
import type { StoredForm } from "./transformed-storage.js";

const HEADER_0 = 0x00;
const HEADER_1 = 0x7a; // "z"
const ENCRYPTED = Buffer.from("k8s:enc:");
/** Smaller values gain too little for the work (an empty ConfigMap is about 150 bytes). */
const MIN_BYTES = 128;
/** Bounds of inflate's output chunk. */
const MIN_CHUNK = 1024;
const MAX_CHUNK = 64 * 1024;
/** zlib level 3: within 10 % of level 6's size on orch's objects at three quarters of its time. */
const LEVEL = 3;

/** The stored form that compresses with the newest dictionary and reads values compressed with any. */
export function compressedValues(): StoredForm {
  const newest = Math.max(...VALUE_DICTIONARIES.keys());
  const dictionary = VALUE_DICTIONARIES.get(newest)!;
  const header = Buffer.from([HEADER_0, HEADER_1, newest]);
  return {
    seal(plain) {
      if (!worthCompressing(plain)) return plain;
      const body = deflateRawSync(plain, { dictionary, level: LEVEL });
      // A value starting with NUL is compressed whatever it gains, so that every NUL-led stored value has the header.
      if (body.length + header.length >= plain.length && plain[0] !== HEADER_0) return plain;
      return Buffer.concat([header, body]);
    },
    open(stored) {
      if (stored.length < 3 || stored[0] !== HEADER_0 || stored[1] !== HEADER_1) return { value: stored, stale: false };
      const number = stored[2]!;
      const known = VALUE_DICTIONARIES.get(number);
      if (known === undefined) throw new Error(`the value was compressed with dictionary ${number}, which this version of the server does not have (it knows ${[...VALUE_DICTIONARIES.keys()].join(", ")})`);
      // Nothing this form wrote inflates past the size limit: a value that does came from elsewhere, and is refused.
      // Output chunks near the value's size (orch's objects inflate to 3-4× their stored size): zlib's 16 KiB default
      // costs a quarter of the inflate in allocation, and ownBytes a copy out of it.
      const chunkSize = Math.min(Math.max(4 * stored.length, MIN_CHUNK), MAX_CHUNK);
      const value = ownBytes(inflateRawSync(stored.subarray(3), { dictionary: known, maxOutputLength: MAX_VALUE_BYTES, chunkSize }));
      return { value, stale: false };
    },
  };
}

function worthCompressing(plain: Uint8Array): boolean {
  if (plain[0] === HEADER_0) return plain.length <= MAX_VALUE_BYTES;
  if (plain.length < MIN_BYTES || plain.length > MAX_VALUE_BYTES) return false;
  return !Buffer.from(plain.buffer, plain.byteOffset, ENCRYPTED.length).equals(ENCRYPTED);
}
