// Byte helpers of the storage layer.
//
// ownBytes: values kept for long (the watch caches hold every object's stored bytes)
// must not be small views of large buffers: a view keeps its whole buffer
// alive, and etcd's client decodes values as views of the response they came
// in (a list of 30,000 pods is one 100 MB buffer), zlib as views of its
// 16 KiB output chunk.

/** `bytes` itself, or a copy of it when it is a view of a buffer more than twice its size. */
export function ownBytes(bytes: Buffer): Buffer {
  return bytes.buffer.byteLength > 2 * bytes.length && bytes.buffer.byteLength > Buffer.poolSize ? Buffer.from(bytes) : bytes;
}

/** Whether two byte strings are equal (any two views: a buffer and its copy from the network). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
