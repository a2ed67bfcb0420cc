// Short, name-safe hashes of templates and revisions (upstream's ComputeHash
// and HashControllerRevision): FNV-1a 32 over a canonical JSON (keys sorted)
// plus the collision count, its decimal digits spelt in upstream's
// SafeEncodeString alphabet (no vowels, no look-alikes).

const ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The hash of `value` as used in names and the pod-template-hash / controller-revision-hash labels. */
export function computeHash(value: unknown, collisionCount?: number | null): string {
  const text = canonicalJson(value) + (collisionCount ? `#${collisionCount}` : "");
  return [...String(fnv1a32(text))].map((c) => ALPHABET[c.charCodeAt(0) % ALPHABET.length]).join("");
}
