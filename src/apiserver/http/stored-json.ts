// Responses from stored bytes: objects are stored as JSON without their
// resourceVersion (the revision is the version), with apiVersion, kind and
// metadata first. Splicing `"resourceVersion":"N"` in after `"metadata":{`
// gives exactly the JSON a serializer would write, without parsing or
// stringifying again: lists of thousands of objects become memory copies.

const enc = new TextEncoder();

/**
 * The response JSON of a stored object in its stored version, or undefined
 * when the bytes do not start as expected (then the caller serializes).
 */
export function spliceResourceVersion(stored: Uint8Array, apiVersion: string, kind: string, revision: number): Buffer | undefined {
  const prefix = enc.encode(`{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},"metadata":{`);
  if (stored.length <= prefix.length) return undefined;
  for (let i = 0; i < prefix.length; i++) if (stored[i] !== prefix[i]) return undefined;
  const empty = stored[prefix.length] === 0x7d; // "}": metadata has no other fields
  const rv = enc.encode(`"resourceVersion":"${revision}"${empty ? "" : ","}`);
  const out = Buffer.allocUnsafe(stored.length + rv.length);
  out.set(stored.subarray(0, prefix.length), 0);
  out.set(rv, prefix.length);
  out.set(stored.subarray(prefix.length), prefix.length + rv.length);
  return out;
}
