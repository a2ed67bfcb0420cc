// A stored value that could not be read back as written: encryption at rest
// could not open it (a wrong or missing key), or lmdb found it fails its
// checksum (a damaged file). It is not an error of the whole read: it comes
// back as this marker value naming why, and the decoder above turns it into
// the corrupt-object error of that one key (seed 000, "States and
// transitions", rule 4), which the unsafe delete can remove.

const enc = new TextEncoder();
const dec = new TextDecoder();
/** NUL (never the start of a stored object), a marker, the reason. */
const MARKER = enc.encode("\u0000transform-failure:");

/** The marker value for a value that cannot be read, saying why. */
export function unreadableValue(reason: string): Uint8Array {
  return Buffer.concat([MARKER, enc.encode(reason)]);
}

/** Why a value could not be read, or undefined for a plain value. */
export function unreadableReason(value: Uint8Array): string | undefined {
  if (value.length < MARKER.length || value[0] !== 0) return undefined;
  for (let i = 0; i < MARKER.length; i++) if (value[i] !== MARKER[i]) return undefined;
  return dec.decode(value.subarray(MARKER.length));
}
