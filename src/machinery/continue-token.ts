// Continue tokens for chunked lists (seed 000, "Chunked lists"): opaque to
// clients, but shaped as upstream's (base64url of {"v":"meta.k8s.io/v1","rv":N,"start":"..."})
// so they look familiar. Decoding validates and refuses start keys that would
// escape the listed resource's key prefix.

import { badRequest } from "./errors.js";

/** The token version upstream writes; `meta.orch.io/v1` is accepted as well. */
export const CONTINUE_TOKEN_VERSION = "meta.k8s.io/v1";
const ACCEPTED_VERSIONS = new Set([CONTINUE_TOKEN_VERSION, "meta.orch.io/v1"]);

export interface ContinueToken {
  /**
   * The revision the first chunk was read at. Negative (-1) is upstream's
   * "continue at the latest revision", issued with an inconsistent-continuation 410.
   */
  resourceVersion: number;
  /** The next key to read, relative to the resource's key prefix, without a leading "/". */
  startKey: string;
}

/** Thrown inside this module only; callers get a 400 ApiError. */
function invalidKey(detail?: string): Error {
  return new Error(detail === undefined ? "continue key is not valid" : `continue key is not valid: ${detail}`);
}

const B64URL = /^[A-Za-z0-9_-]*$/;

// Go's base64.RawURLEncoding is strict: no padding, no foreign characters, no dangling 6 bits.
function decodeBase64Url(s: string): string {
  if (!B64URL.test(s)) {
    const bad = s.search(/[^A-Za-z0-9_-]/);
    throw invalidKey(`illegal base64 data at input byte ${bad}`);
  }
  if (s.length % 4 === 1) throw invalidKey(`illegal base64 data at input byte ${s.length - 1}`);
  return Buffer.from(s, "base64url").toString("utf8");
}

/** path.Clean of a "/"-rooted path, as Go's, enough to detect `..`, `.`, `//` and trailing "/". */
function cleanRooted(p: string): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}

/** Encodes a token; `startKey` is relative to the resource's key prefix. */
export function encodeContinueToken(token: ContinueToken): string {
  const json = JSON.stringify({ v: CONTINUE_TOKEN_VERSION, rv: token.resourceVersion, start: token.startKey });
  return Buffer.from(json, "utf8").toString("base64url");
}

/**
 * Decodes and validates a token. Malformed tokens are a 400 with upstream's
 * text: `invalid continue token: continue key is not valid: ...`.
 */
export function decodeContinueToken(token: string): ContinueToken {
  try {
    return decodeOrThrow(token);
  } catch (e) {
    throw badRequest(`invalid continue token: ${(e as Error).message}`);
  }
}

function decodeOrThrow(token: string): ContinueToken {
  const text = decodeBase64Url(token);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw invalidKey((e as Error).message);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw invalidKey("token is not a JSON object");
  const { v, rv, start } = raw as { v?: unknown; rv?: unknown; start?: unknown };
  if (typeof v !== "string" || !ACCEPTED_VERSIONS.has(v)) {
    throw new Error(`continue key is not valid: server does not recognize this encoded version ${JSON.stringify(v ?? "")}`);
  }
  if (rv !== undefined && (typeof rv !== "number" || !Number.isSafeInteger(rv))) throw invalidKey("resourceVersion is not an integer");
  if (rv === undefined || rv === 0) throw invalidKey(`incorrect encoded start resourceVersion (version ${v})`);
  if (start !== undefined && typeof start !== "string") throw invalidKey("start key is not a string");
  if (start === undefined || start === "") throw invalidKey(`encoded start key empty (version ${v})`);
  // Defend against path traversal: the cleaned key must equal the key, so it can
  // never climb above the resource prefix it is appended to.
  const rooted = start.startsWith("/") ? start : "/" + start;
  if (cleanRooted(rooted) !== rooted) throw invalidKey(start);
  return { resourceVersion: rv, startKey: rooted.slice(1) };
}

function withSlash(prefix: string): string {
  return prefix.endsWith("/") ? prefix : prefix + "/";
}

/**
 * A token continuing at `key` (the next key to read, under `keyPrefix`), as
 * upstream's EncodeContinue. Throws if the key is not under the prefix.
 */
export function encodeContinue(key: string, keyPrefix: string, resourceVersion: number): string {
  const prefix = withSlash(keyPrefix);
  if (!key.startsWith(prefix) || key.length === prefix.length) {
    throw new Error(`unable to encode next field: the key ${JSON.stringify(key)} is not under the key prefix ${JSON.stringify(prefix)}`);
  }
  return encodeContinueToken({ resourceVersion, startKey: key.slice(prefix.length) });
}

/** The full start key and revision of a token under `keyPrefix` (400 when malformed). */
export function decodeContinue(token: string, keyPrefix: string): { key: string; resourceVersion: number } {
  const t = decodeContinueToken(token);
  return { key: withSlash(keyPrefix) + t.startKey, resourceVersion: t.resourceVersion };
}
