// Comparing secrets (bearer tokens, bootstrap token secrets) without leaking
// through timing how much of a guess was right (issue 18, point 7): both sides
// become equal-length SHA-256 digests compared with crypto.timingSafeEqual,
// so neither the length nor a common prefix shows.

import { createHash, timingSafeEqual } from "node:crypto";

/** The digest compared; tables of secrets keep digests rather than the secrets. */
export function secretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/** Two digests of secretDigest, in constant time. */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether `given` is `expected`, in time that does not depend on where they differ. */
export function secretEqual(given: string, expected: string): boolean {
  return digestsEqual(secretDigest(given), secretDigest(expected));
}
