// Byte helpers of the storage layer.
//
// ownBytes: values kept for long (the watch caches hold every object's stored bytes,
// the API server memoizes encodings) must not be small views of large buffers: a
// view keeps its whole buffer alive. etcd's client decodes values as views of
// the response they came in (a list of 30,000 pods is one 100 MB buffer), zlib
// as views of its output chunk, and every Buffer under 4 KiB that Node makes
// with allocUnsafe or from a string is a view of a shared 8 KiB pool slab.

/**
 * `bytes` itself, or a copy with a buffer of its own when it is a view of a
 * buffer more than twice its size. The copy never comes from Node's pool: one
 * small Buffer kept for long keeps its whole slab alive (at 9,000 pods the API
 * server held 7,593 slabs, 62 MB, for one memoized watch frame each).
 */
export function ownBytes<B extends Uint8Array>(bytes: B): B | Buffer {
  if (bytes.buffer.byteLength <= 2 * bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}

/** Whether two byte strings are equal (any two views: a buffer and its copy from the network). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
