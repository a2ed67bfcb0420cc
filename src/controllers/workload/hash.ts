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

/**
 * `value` with zero values dropped from objects (null, false, 0, "", {} and
 * []), recursively: what Go's decoding makes of an omitted field, so two
 * templates that differ only in spelling (kubectl writes
 * `creationTimestamp: null`, `resources: {}`) compare equal, as upstream's
 * semantic equality has them.
 */
export function withoutZeroValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeroValues);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const n = withoutZeroValues(v);
    if (n === null || n === undefined || n === false || n === 0 || n === "") continue;
    if (Array.isArray(n) ? n.length === 0 : typeof n === "object" && Object.keys(n as object).length === 0) continue;
    out[k] = n;
  }
  return out;
}

export function semanticEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(withoutZeroValues(a)) === canonicalJson(withoutZeroValues(b));
}
