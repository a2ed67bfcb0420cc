// JSON request bodies: an iterative structural scan enforces the nesting limit
// and collects duplicate keys by path, then JSON.parse builds the value (last
// duplicate wins, as upstream's decoder); a body that fails either is scanned
// again to word the error as Go's encoding/json does, with its byte position.
// Seed 000, "Field validation"; benchmark beside it in decode.bench.ts.

import { badRequest, requestEntityTooLarge, ApiError, goQuote } from "../index.js";
import { MAX_OBJECT_DEPTH, mayHoldSurrogateEscape, wellFormedStrings } from "../object-depth.js";

/** Upstream's limit on a request body (3 MiB); the one nesting limit (object-depth.ts: lower than Go's 10,000, and why). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
export const MAX_JSON_DEPTH = MAX_OBJECT_DEPTH;

export interface ParsedBody {
  readonly value: unknown;
  /** Paths of keys that appeared more than once (`spec.replicas`), in document order. */
  readonly duplicates: string[];
}

export interface JsonParseOptions {
  /** Bodies above this many bytes are rejected with 413. */
  readonly maxBytes?: number;
  /** Containers nested deeper than this are rejected with 400 (Go: 10000). */
  readonly maxDepth?: number;
}

/**
 * A syntax error as Go's encoding/json words it (`invalid character '}'
 * looking for beginning of object key string`), with where it happened:
 * `offset` is the 0-based byte offset of the offending byte (the input length
 * at an unexpected end), `line`/`column` are 1-based (column in characters).
 */
export class JsonSyntaxError extends Error {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  constructor(goMessage: string, offset: number, line: number, column: number) {
    super(goMessage);
    this.name = "JsonSyntaxError";
    this.offset = offset;
    this.line = line;
    this.column = column;
  }
}

/**
 * Parse a JSON request body. Throws ApiError 413 above `maxBytes`, 400 for a
 * syntax error or excessive nesting (the JsonSyntaxError is the `cause`).
 */
export function parseJsonBody(body: string | Buffer, options: JsonParseOptions = {}): ParsedBody {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const text = typeof body === "string" ? body : body.toString("utf8");
  const size = typeof body === "string" ? stringBytes(body, maxBytes) : body.length;
  if (size > maxBytes) throw requestEntityTooLarge(`the request body is ${size} bytes, over the limit of ${maxBytes} bytes`);
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  // Fast path: a structural scan (depth, duplicate keys) that trusts the
  // syntax, then the native parser, which checks it. Only a failure of either
  // pays for the exact validating scan that words the error as Go does.
  const duplicates = scanKeys(text, maxDepth);
  if (duplicates !== undefined) {
    try {
      const value: unknown = JSON.parse(text);
      // A lone surrogate escape becomes U+FFFD, as Go's decoder writes it.
      return { value: mayHoldSurrogateEscape(text) ? wellFormedStrings(value) : value, duplicates };
    } catch {
      // fall through: find and word the syntax error
    }
  }
  const err = scanJson(text, maxDepth);
  // JSON.parse is laxer than Go in nothing we know of; keep a generic wording just in case.
  throw syntaxErrorToApi(err instanceof JsonSyntaxError ? err : new JsonSyntaxError("invalid JSON", 0, 1, 1));
}

function syntaxErrorToApi(err: JsonSyntaxError): ApiError {
  const msg = `json parse error: ${err.message} (line ${err.line}, column ${err.column}, byte ${err.offset})`;
  return new ApiError(badRequest(msg).status, { cause: err });
}

/**
 * The structural fast path: duplicate key paths, or undefined when nesting
 * exceeds `maxDepth`. Assumes valid JSON (the caller parses natively
 * afterwards), but stays bounded and total on any input: strings are skipped
 * with indexOf, everything else is one charCodeAt per byte.
 */
export function scanKeys(s: string, maxDepth: number): string[] | undefined {
  const n = s.length;
  const isObject: boolean[] = [];
  const memberKey: string[] = [];
  const memberIndex: number[] = [];
  const seenKeys: (string[] | Set<string>)[] = [];
  let depth = 0;
  let duplicates: string[] | undefined;
  let expectKey = false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === Quote) {
      let end = s.indexOf('"', i + 1);
      while (end > 0 && s.charCodeAt(end - 1) === Backslash && countBackslashes(s, end - 1) % 2 === 1) end = s.indexOf('"', end + 1);
      if (end < 0) break; // unterminated: the native parser will say so
      if (expectKey && depth > 0) {
        expectKey = false;
        const frame = depth - 1;
        const key = keyText(s, i, end);
        memberKey[frame] = key;
        if (seenBefore(seenKeys, frame, key)) (duplicates ??= []).push(pathOf(isObject, memberKey, memberIndex, frame));
      }
      i = end;
    } else if (c === BraceOpen || c === BracketOpen) {
      if (depth >= maxDepth) return undefined;
      const obj = c === BraceOpen;
      isObject[depth] = obj;
      memberIndex[depth] = 0;
      if (obj) {
        // Reuse each level's key list: sibling objects (list items) then cost no allocation.
        const prev = seenKeys[depth];
        if (Array.isArray(prev)) prev.length = 0;
        else seenKeys[depth] = [];
      }
      expectKey = obj;
      depth++;
    } else if (c === BraceClose || c === BracketClose) {
      if (depth > 0) depth--;
      expectKey = false;
    } else if (c === Comma && depth > 0) {
      if (isObject[depth - 1]) expectKey = true;
      else memberIndex[depth - 1]!++;
    }
  }
  return duplicates ?? [];
}

/** UTF-8 size of a string, computed only when the cheap bound cannot decide. */
function stringBytes(s: string, limit: number): number {
  // Each UTF-16 unit is 1 to 3 UTF-8 bytes.
  if (s.length * 3 <= limit) return s.length;
  return Buffer.byteLength(s, "utf8");
}

// ---- the scanner ---------------------------------------------------------

// Character codes. Plain constants: with verbatimModuleSyntax a `const enum`
// compiles to an object, and its property loads cost a third of the scan.
const Tab = 0x09;
const Lf = 0x0a;
const Cr = 0x0d;
const Space = 0x20;
const Quote = 0x22;
const Plus = 0x2b;
const Comma = 0x2c;
const Minus = 0x2d;
const Dot = 0x2e;
const Zero = 0x30;
const Nine = 0x39;
const Colon = 0x3a;
const BracketOpen = 0x5b;
const Backslash = 0x5c;
const BracketClose = 0x5d;
const LowerE = 0x65;
const UpperE = 0x45;
const LowerF = 0x66;
const LowerN = 0x6e;
const LowerT = 0x74;
const LowerU = 0x75;
const BraceOpen = 0x7b;
const BraceClose = 0x7d;

/** Small objects compare keys by linear search; bigger ones switch to a Set. */
const LINEAR_KEYS = 12;

/** Notes `key` among the keys seen in the object at `frame`; true when it was there already. */
function seenBefore(seenKeys: (string[] | Set<string>)[], frame: number, key: string): boolean {
  const seen = seenKeys[frame]!;
  if (!Array.isArray(seen)) {
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  }
  if (seen.includes(key)) return true;
  if (seen.length < LINEAR_KEYS) seen.push(key);
  else seenKeys[frame] = new Set(seen).add(key);
  return false;
}

/**
 * Validate `s` as one JSON value and return the duplicate key paths, or the
 * first syntax error. Iterative: the container stack lives in arrays, so depth
 * costs heap, not call stack.
 */
export function scanJson(s: string, maxDepth: number): string[] | JsonSyntaxError {
  // One flat loop, no closures: V8 keeps `i` and `depth` in registers only
  // when no inner function captures them, which doubles the speed.
  const n = s.length;
  // Per open container: is it an object, its current key or element index, its keys so far.
  const isObject: boolean[] = [];
  const memberKey: string[] = [];
  const memberIndex: number[] = [];
  const seenKeys: (string[] | Set<string>)[] = [];
  let depth = 0;
  let duplicates: string[] | undefined;
  let i = 0;
  let c = 0;
  // At the top of the loop: true when `i` is at the opening quote of an object key.
  let atKey = false;

  for (;;) {
    if (atKey) {
      atKey = false;
      const end = scanString(s, i);
      if (end < 0) return syntaxError(s, -end - 1, stringContext(s, -end - 1));
      const key = keyText(s, i, end);
      i = end + 1;
      while (i < n && isSpace(s.charCodeAt(i))) i++;
      if (i >= n) return syntaxError(s, n, "");
      if (s.charCodeAt(i) !== Colon) return syntaxError(s, i, "after object key");
      i++;
      const frame = depth - 1;
      memberKey[frame] = key;
      if (seenBefore(seenKeys, frame, key)) (duplicates ??= []).push(pathOf(isObject, memberKey, memberIndex, frame));
    }

    // ---- expecting a value
    while (i < n && isSpace((c = s.charCodeAt(i)))) i++;
    if (i >= n) return syntaxError(s, n, "");
    if (c === BraceOpen || c === BracketOpen) {
      if (depth >= maxDepth) return syntaxError(s, i, "exceeded max depth");
      const obj = c === BraceOpen;
      isObject[depth] = obj;
      memberIndex[depth] = 0;
      i++;
      while (i < n && isSpace((c = s.charCodeAt(i)))) i++;
      if (i >= n) return syntaxError(s, n, "");
      if (obj) {
        seenKeys[depth] = [];
        depth++;
        if (c === BraceClose) {
          i++;
          depth--;
        } else {
          if (c !== Quote) return syntaxError(s, i, "looking for beginning of object key string");
          atKey = true;
          continue;
        }
      } else {
        depth++;
        if (c === BracketClose) {
          i++;
          depth--;
        } else continue;
      }
    } else if (c === Quote) {
      const end = scanString(s, i);
      if (end < 0) return syntaxError(s, -end - 1, stringContext(s, -end - 1));
      i = end + 1;
    } else if (c === Minus || (c >= Zero && c <= Nine)) {
      const end = scanNumber(s, i);
      if (end < 0) return syntaxError(s, -end - 1, numberContext(s, -end - 1));
      i = end;
    } else if (c === LowerT || c === LowerF || c === LowerN) {
      const word = c === LowerT ? "true" : c === LowerF ? "false" : "null";
      for (let k = 1; k < word.length; k++) {
        if (i + k >= n) return syntaxError(s, n, "");
        if (s.charCodeAt(i + k) !== word.charCodeAt(k)) return syntaxError(s, i + k, `in literal ${word} (expecting ${quoteByte(word[k]!)})`);
      }
      i += word.length;
    } else {
      return syntaxError(s, i, "looking for beginning of value");
    }

    // ---- after a complete value: close containers or move to the next member
    for (;;) {
      while (i < n && isSpace((c = s.charCodeAt(i)))) i++;
      if (depth === 0) {
        if (i < n) return syntaxError(s, i, "after top-level value");
        return duplicates ?? [];
      }
      if (i >= n) return syntaxError(s, n, "");
      const top = depth - 1;
      if (isObject[top]) {
        if (c === Comma) {
          i++;
          while (i < n && isSpace((c = s.charCodeAt(i)))) i++;
          if (i >= n) return syntaxError(s, n, "");
          if (c !== Quote) return syntaxError(s, i, "looking for beginning of object key string");
          atKey = true;
          break;
        }
        if (c !== BraceClose) return syntaxError(s, i, "after object key:value pair");
      } else {
        if (c === Comma) {
          i++;
          memberIndex[top]!++;
          break;
        }
        if (c !== BracketClose) return syntaxError(s, i, "after array element");
      }
      i++;
      depth--;
    }
  }
}

/** Path of the current member of container `frame`, upstream's `spec.containers[0].name` form. */
function pathOf(isObject: boolean[], memberKey: string[], memberIndex: number[], frame: number): string {
  let p = "";
  for (let d = 0; d <= frame; d++) {
    if (isObject[d]) p += p === "" ? memberKey[d] : "." + memberKey[d];
    else p += `[${memberIndex[d]}]`;
  }
  return p;
}

function isSpace(c: number): boolean {
  return c === Space || c === Lf || c === Cr || c === Tab;
}

/** From an opening quote: the index of the closing quote, or -(offending index)-1. */
function scanString(s: string, start: number): number {
  const n = s.length;
  let i = start + 1;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === Quote) return i;
    if (c < 0x20) return -i - 1;
    if (c === Backslash) {
      i++;
      if (i >= n) return -n - 1;
      const e = s.charCodeAt(i);
      if (e === LowerU) {
        for (let k = 1; k <= 4; k++) {
          if (i + k >= n) return -n - 1;
          if (!isHex(s.charCodeAt(i + k))) return -(i + k) - 1;
        }
        i += 4;
      } else if (!(e === Quote || e === Backslash || e === 0x2f || e === 0x62 || e === LowerF || e === LowerN || e === 0x72 || e === LowerT)) {
        return -i - 1;
      }
    }
    i++;
  }
  return -n - 1;
}

/** The key between quotes at `start` and `end`; escapes are rare, so only then decode. */
function keyText(s: string, start: number, end: number): string {
  const raw = s.slice(start + 1, end);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(s.slice(start, end + 1)) as string;
  } catch {
    return raw; // invalid escape: the native parse rejects the body anyway
  }
}

/** From a `-` or digit: the index after the number, or -(offending index)-1 (JSON's grammar, as Go's scanner). */
function scanNumber(s: string, start: number): number {
  const n = s.length;
  let i = start;
  if (s.charCodeAt(i) === Minus) i++;
  if (i >= n) return -n - 1;
  let c = s.charCodeAt(i);
  if (c === Zero) i++;
  else if (c > Zero && c <= Nine) while (i < n && isDigit(s.charCodeAt(i))) i++;
  else return -i - 1;
  if (i < n && s.charCodeAt(i) === Dot) {
    i++;
    if (i >= n) return -n - 1;
    if (!isDigit(s.charCodeAt(i))) return -i - 1;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
  }
  if (i < n && ((c = s.charCodeAt(i)) === LowerE || c === UpperE)) {
    i++;
    if (i < n && ((c = s.charCodeAt(i)) === Plus || c === Minus)) i++;
    if (i >= n) return -n - 1;
    if (!isDigit(s.charCodeAt(i))) return -i - 1;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= Zero && c <= Nine;
}

function isHex(c: number): boolean {
  return (c >= Zero && c <= Nine) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

// ---- error wording (cold path) -------------------------------------------

/** Go's context for a bad character inside a string literal. */
function stringContext(s: string, at: number): string {
  if (at >= s.length) return "";
  // Walk back over hex digits to see whether we are inside \uXXXX.
  let k = at - 1;
  while (k >= 0 && at - k <= 4 && isHex(s.charCodeAt(k))) k--;
  if (k >= 1 && s.charCodeAt(k) === LowerU && s.charCodeAt(k - 1) === Backslash && countBackslashes(s, k - 1) % 2 === 1) {
    return "in \\u hexadecimal character escape";
  }
  if (s.charCodeAt(at - 1) === Backslash && countBackslashes(s, at - 1) % 2 === 1) return "in string escape code";
  return "in string literal";
}

function countBackslashes(s: string, end: number): number {
  let k = end;
  while (k >= 0 && s.charCodeAt(k) === Backslash) k--;
  return end - k;
}

/** Go's context for a bad character inside a number. */
function numberContext(s: string, at: number): string {
  if (at >= s.length) return "";
  const prev = s.charCodeAt(at - 1);
  if (prev === Dot) return "after decimal point in numeric literal";
  if (prev === LowerE || prev === UpperE || prev === Plus || (prev === Minus && at >= 2 && (s.charCodeAt(at - 2) | 0x20) === LowerE)) {
    return "in exponent of numeric literal";
  }
  return "in numeric literal";
}

/** Go's quoteChar: the offending byte in single quotes. */
function quoteByte(ch: string): string {
  if (ch === "'") return "'\\''";
  if (ch === '"') return "'\"'";
  const q = goQuote(ch);
  return "'" + q.slice(1, -1) + "'";
}

function syntaxError(s: string, at: number, context: string): JsonSyntaxError {
  // Offsets and the offending byte are in UTF-8, as Go reads bytes.
  const offset = Buffer.byteLength(s.slice(0, at), "utf8");
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < at && k < s.length; k++) {
    if (s.charCodeAt(k) === Lf) {
      line++;
      lineStart = k + 1;
    }
  }
  const column = at - lineStart + 1;
  if (at >= s.length || context === "") return new JsonSyntaxError("unexpected end of JSON input", offset, line, column);
  const firstByte = Buffer.from(String.fromCodePoint(s.codePointAt(at)!), "utf8")[0]!;
  return new JsonSyntaxError(`invalid character ${quoteByte(String.fromCharCode(firstByte))} ${context}`, offset, line, column);
}
