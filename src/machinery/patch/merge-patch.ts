// JSON Merge Patch (RFC 7386): objects merge recursively, null deletes,
// anything else (arrays included) replaces. Pure: inputs are never mutated.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function applyMergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return patch as Json;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    // defineProperty, not assignment: a "__proto__" key is data here, never the prototype.
    else Object.defineProperty(out, key, { value: applyMergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
