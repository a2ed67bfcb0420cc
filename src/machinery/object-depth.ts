// One nesting limit for every object the API server takes in, whatever its
// format (JSON, YAML, CBOR, Protobuf; objects and patches) and after a patch
// is applied. Upstream's decoders stop at 10,000 levels, but no JavaScript
// stage gets near that: V8's own JSON.parse/stringify and structuredClone
// overflow the stack between 2,000 and 5,000 levels, the YAML library near
// 600 (output) and 800 (input). 250 leaves every later stage (strategic merge,
// merge and JSON patch, managed fields, YAML in and out, field validation)
// twice the room it needs; real objects stay under 30. docs/reliability.md,
// "Deep and huge objects". Both walks here are iterative.

import { badRequest } from "./errors.js";

export const MAX_OBJECT_DEPTH = 250;

/** The 400 for an object nested deeper than `max` containers (`[[1]]` is 2 deep). */
export function tooDeep(max = MAX_OBJECT_DEPTH) {
  return badRequest(`the object is nested more than ${max} levels deep`);
}

/** Whether `value` holds containers nested deeper than `max`. */
export function exceedsDepth(value: unknown, max = MAX_OBJECT_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v as object);
    for (const child of children) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** Throws the 400 when `value` is nested deeper than `max`. */
export function checkDepth(value: unknown, max = MAX_OBJECT_DEPTH): void {
  if (exceedsDepth(value, max)) throw tooDeep(max);
}

/**
 * Strings with a lone UTF-16 surrogate (from a `\ud800` escape: UTF-8 input
 * cannot carry one) get U+FFFD in its place, keys included, as upstream's
 * JSON decoder does. Returns the value, changed in place where needed.
 */
export function wellFormedStrings(value: unknown): unknown {
  if (typeof value === "string") return toWellFormed(value);
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item === "string") {
          if (!isWellFormed(item)) v[i] = toWellFormed(item);
        } else stack.push(item);
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      const item = o[key];
      if (typeof item === "string" && !isWellFormed(item)) o[key] = toWellFormed(item);
      else if (typeof item === "object") stack.push(item);
      if (!isWellFormed(key)) {
        const fixed = toWellFormed(key);
        o[fixed] = o[key];
        delete o[key];
      }
    }
  }
  return value;
}

/** Whether a JSON or YAML text may hold an escaped surrogate (`\ud8..`-`\udf..`, YAML's `\U0000d8..`): the cheap test before the walk. */
export function mayHoldSurrogateEscape(text: string): boolean {
  return /\\u[dD][89a-fA-F]|\\U0000[dD][89a-fA-F]/.test(text);
}

// ES2024's String.prototype.isWellFormed/toWellFormed (Node 20 has them; the compiler's lib is ES2023).
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };
const isWellFormed = (s: string): boolean => (s as unknown as WellFormed).isWellFormed();
const toWellFormed = (s: string): string => (s as unknown as WellFormed).toWellFormed();
