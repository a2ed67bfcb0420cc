// RFC 6902 JSON Patch over decoded JSON (seed 000, "Update mechanisms":
// application/json-patch+json). All or nothing: the operations run on a private
// deep copy, so a failure leaves nothing half-applied and the input is never touched.
// Status codes and limits follow upstream's PATCH handler; see applyJsonPatch.

import { badRequest, requestEntityTooLarge } from "../errors.js";
import { goQuote } from "../go-format.js";
import { patchRejected } from "./errors.js";
import { cloneJson, hasOwn, isJsonObject, jsonByteLength, jsonEqual, setOwn, type JsonObject } from "./json-value.js";
import type { Json } from "./merge-patch.js";

/** Upstream's maxJSONPatchOperations: longer patches are refused before any work. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/**
 * Upstream's default JSONPatchMaxCopyBytes (3 MiB): `copy` can double a
 * document per operation, so the bytes all copies add are capped.
 */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

export interface JsonPatchOptions {
  /** Default MAX_JSON_PATCH_OPERATIONS. */
  readonly maxOperations?: number;
  /** Total bytes (compact JSON) that `copy` operations may add; default MAX_JSON_PATCH_COPY_BYTES. */
  readonly maxCopyBytes?: number;
}

/**
 * Applies `ops` (the decoded request body) to `doc` and returns the result.
 * Errors, as upstream: a body that is not a list of objects → 400 BadRequest;
 * more than the allowed operations → 413; any operation that does not apply
 * (bad path, failed `test`, copy limit, unknown `op`) → 422 Invalid.
 *
 * Where upstream's library departs from the RFC, we keep the RFC except for one
 * leniency kubectl users rely on: `replace` of a missing object member adds it
 * (`replace /metadata/labels/x` works whether or not the label exists).
 */
export function applyJsonPatch(doc: unknown, ops: unknown, options: JsonPatchOptions = {}): Json {
  const operations = decodeOperations(ops);
  const maxOps = options.maxOperations ?? MAX_JSON_PATCH_OPERATIONS;
  if (operations.length > maxOps) {
    throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${maxOps}, got ${operations.length}`);
  }
  const state: State = { root: cloneJson(doc), copied: 0, maxCopyBytes: options.maxCopyBytes ?? MAX_JSON_PATCH_COPY_BYTES };
  for (const op of operations) {
    const failure = applyOperation(state, op);
    if (failure !== undefined) throw patchRejected(failure);
  }
  return state.root;
}

interface State {
  root: Json;
  copied: number;
  readonly maxCopyBytes: number;
}

/** Go's encoding/json name for a JSON value's kind, as its unmarshal errors print it. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value; // object, string, number
}

function decodeOperations(ops: unknown): Array<JsonObject | null> {
  // `null` decodes to an empty patch in Go, which changes nothing.
  if (ops === null || ops === undefined) return [];
  if (!Array.isArray(ops)) throw badRequest(`json: cannot unmarshal ${jsonKind(ops)} into Go value of type jsonpatch.Patch`);
  for (const op of ops) {
    if (op !== null && !isJsonObject(op)) throw badRequest(`json: cannot unmarshal ${jsonKind(op)} into Go value of type jsonpatch.Operation`);
  }
  return ops as Array<JsonObject | null>;
}

// ---- pointers (RFC 6901) ----

/** Reference tokens of a pointer, or undefined when it is not a valid pointer. */
function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (pointer[0] !== "/") return undefined;
  const tokens = pointer.slice(1).split("/");
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.includes("~")) continue;
    // `~` must start `~0` or `~1`; decode ~1 before ~0 so "~01" means "~1" literally.
    if (/~(?![01])/.test(t)) return undefined;
    tokens[i] = t.replace(/~1/g, "/").replace(/~0/g, "~");
  }
  return tokens;
}

type Container = JsonObject | Json[];

/**
 * The container holding the last token's target, or undefined when a step on the
 * way is missing or a scalar. Only called with at least one token.
 */
function parentOf(root: Json, tokens: readonly string[]): Container | undefined {
  let node: Json = root;
  for (let i = 0; i < tokens.length - 1; i++) {
    const next = childOf(node, tokens[i]!);
    if (next === undefined) return undefined;
    node = next;
  }
  return typeof node === "object" && node !== null ? node : undefined;
}

function childOf(node: Json, token: string): Json | undefined {
  if (Array.isArray(node)) {
    const i = arrayIndex(token);
    return i !== undefined && i < node.length ? node[i] : undefined;
  }
  if (isJsonObject(node)) return hasOwn(node, token) ? node[token] : undefined;
  return undefined;
}

/** RFC 6901 array index: `0` or digits without a leading zero (no sign, no `-`). */
function arrayIndex(token: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const n = Number(token);
  return Number.isSafeInteger(n) ? n : undefined;
}

function invalidIndex(token: string): string {
  return `Unable to access invalid index: ${token}: invalid index referenced`;
}

// ---- operations ----

type Outcome = string | undefined; // the failure's text, or undefined on success

function applyOperation(state: State, op: JsonObject | null): Outcome {
  const kind = op !== null && typeof op["op"] === "string" ? op["op"] : "unknown";
  if (op === null) return `Unexpected kind: ${kind}`;
  switch (kind) {
    case "add":
      return withPath(op, kind, (path, tokens) => withValue(op, kind, (value) => add(state, path, tokens, value, "add")));
    case "remove":
      return withPath(op, kind, (path, tokens) => remove(state, path, tokens));
    case "replace":
      return withPath(op, kind, (path, tokens) => withValue(op, kind, (value) => replace(state, path, tokens, value)));
    case "test":
      return withPath(op, kind, (path, tokens) => withValue(op, kind, (value) => test(state, path, tokens, value)));
    case "move":
      return withFrom(op, kind, (from, fromTokens) => withPath(op, kind, (path, tokens) => move(state, from, fromTokens, path, tokens)));
    case "copy":
      return withFrom(op, kind, (from, fromTokens) => withPath(op, kind, (path, tokens) => copy(state, from, fromTokens, path, tokens)));
    default:
      return `Unexpected kind: ${kind}`;
  }
}

function withPointer(op: JsonObject, member: "path" | "from", kind: string, then: (pointer: string, tokens: string[]) => Outcome): Outcome {
  const raw = hasOwn(op, member) ? op[member] : undefined;
  if (raw === undefined || raw === null) {
    const what = member === "path" ? "operation missing path field" : "operation, missing from field";
    return `${kind} operation failed to decode ${member}: ${what}: missing value`;
  }
  if (typeof raw !== "string") return `${kind} operation failed to decode ${member}: json: cannot unmarshal ${jsonKind(raw)} into Go value of type string`;
  const tokens = parsePointer(raw);
  if (tokens === undefined) return `${kind} operation does not apply: ${member} ${goQuote(raw)} is not a JSON pointer`;
  return then(raw, tokens);
}

function withPath(op: JsonObject, kind: string, then: (path: string, tokens: string[]) => Outcome): Outcome {
  return withPointer(op, "path", kind, then);
}

function withFrom(op: JsonObject, kind: string, then: (from: string, tokens: string[]) => Outcome): Outcome {
  return withPointer(op, "from", kind, then);
}

/** RFC 6902 §4.1/4.3/4.6: `value` is required (upstream would silently use null). */
function withValue(op: JsonObject, kind: string, then: (value: Json) => Outcome): Outcome {
  if (!hasOwn(op, "value")) return `${kind} operation, missing value field: missing value`;
  return then(cloneJson(op["value"]));
}

/** Inserts `value` at the pointer; `verb` names the operation in messages (add, move, copy). */
function add(state: State, path: string, tokens: readonly string[], value: Json, verb: string): Outcome {
  if (tokens.length === 0) {
    state.root = value;
    return undefined;
  }
  const parent = parentOf(state.root, tokens);
  if (parent === undefined) {
    return verb === "add"
      ? `add operation does not apply: doc is missing path: "${path}": missing value`
      : `${verb} operation does not apply: doc is missing destination path: ${path}: missing value`;
  }
  const key = tokens[tokens.length - 1]!;
  const where = verb === "add" ? `error in add for path: '${path}'` : `error in ${verb} for path: '${path}'`;
  if (!Array.isArray(parent)) {
    setOwn(parent, key, value);
    return undefined;
  }
  if (key === "-") {
    parent.push(value);
    return undefined;
  }
  const i = arrayIndex(key);
  if (i === undefined) {
    return /^-?[0-9]+$/.test(key)
      ? `${where}: ${invalidIndex(key)}`
      : `${where}: value was not a proper array index: '${key}': strconv.Atoi: parsing ${goQuote(key)}: invalid syntax`;
  }
  if (i > parent.length) return `${where}: ${invalidIndex(key)}`;
  parent.splice(i, 0, value);
  return undefined;
}

function remove(state: State, path: string, tokens: readonly string[]): Outcome {
  // Removing the whole document leaves nothing to store; upstream refuses it too.
  const parent = tokens.length === 0 ? undefined : parentOf(state.root, tokens);
  if (parent === undefined) return `remove operation does not apply: doc is missing path: "${path}": missing value`;
  const key = tokens[tokens.length - 1]!;
  const failure = removeMember(parent, key);
  return failure === undefined ? undefined : `error in remove for path: '${path}': ${failure}`;
}

function removeMember(parent: Container, key: string): Outcome {
  if (Array.isArray(parent)) {
    const i = arrayIndex(key);
    if (i === undefined || i >= parent.length) return invalidIndex(key);
    parent.splice(i, 1);
    return undefined;
  }
  if (!hasOwn(parent, key)) return `Unable to remove nonexistent key: ${key}: missing value`;
  delete parent[key];
  return undefined;
}

function replace(state: State, path: string, tokens: readonly string[], value: Json): Outcome {
  if (tokens.length === 0) {
    // An API object is a JSON object; upstream refuses scalars for the whole document.
    if (typeof value !== "object" || value === null) return "replace operation value must be object or array: missing value";
    state.root = value;
    return undefined;
  }
  const parent = parentOf(state.root, tokens);
  if (parent === undefined) return `replace operation does not apply: doc is missing path: ${path}: missing value`;
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(key);
    if (i === undefined || i >= parent.length) return `replace operation does not apply: doc is missing key: ${path}: missing value`;
    parent[i] = value;
    return undefined;
  }
  // Upstream's leniency (see applyJsonPatch): a missing member is added.
  setOwn(parent, key, value);
  return undefined;
}

function test(state: State, path: string, tokens: readonly string[], value: Json): Outcome {
  if (tokens.length === 0) return jsonEqual(state.root, value) ? undefined : `testing value ${path} failed: test failed`;
  const parent = parentOf(state.root, tokens);
  if (parent === undefined) return `test operation does not apply: is missing path: ${path}: missing value`;
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(key);
    if (i === undefined || i >= parent.length) return `error in test for path: '${path}': ${invalidIndex(key)}`;
  }
  // A missing member fails the test (RFC 6902 §4.6), whatever the expected value.
  const actual = childOf(parent, key);
  return actual !== undefined && jsonEqual(actual, value) ? undefined : `testing value ${path} failed: test failed`;
}

/** The value at `tokens` (the whole document for none), or a failure text. */
function read(state: State, verb: string, from: string, tokens: readonly string[]): { value: Json } | { failure: string } {
  if (tokens.length === 0) return { value: state.root };
  const parent = parentOf(state.root, tokens);
  if (parent === undefined) return { failure: `${verb} operation does not apply: doc is missing from path: ${from}: missing value` };
  const key = tokens[tokens.length - 1]!;
  const value = childOf(parent, key);
  if (value === undefined) {
    const inner = Array.isArray(parent) ? invalidIndex(key) : `Unable to find key: ${key}: missing value`;
    return { failure: `error in ${verb} for from: '${from}': ${inner}` };
  }
  return { value };
}

function move(state: State, from: string, fromTokens: readonly string[], path: string, tokens: readonly string[]): Outcome {
  // RFC 6902 §4.4: a location cannot be moved into one of its children.
  if (fromTokens.length < tokens.length && fromTokens.every((t, i) => t === tokens[i])) {
    return `move operation does not apply: path ${path} is inside from path ${from}`;
  }
  if (fromTokens.length === 0) return `move operation does not apply: doc is missing from path: ${from}: missing value`;
  const source = read(state, "move", from, fromTokens);
  if ("failure" in source) return source.failure;
  if (fromTokens.length === tokens.length && fromTokens.every((t, i) => t === tokens[i])) return undefined;
  const failure = removeMember(parentOf(state.root, fromTokens)!, fromTokens[fromTokens.length - 1]!);
  if (failure !== undefined) return `error in move for path: '${from}': ${failure}`;
  return add(state, path, tokens, source.value, "move");
}

function copy(state: State, from: string, fromTokens: readonly string[], path: string, tokens: readonly string[]): Outcome {
  const source = read(state, "copy", from, fromTokens);
  if ("failure" in source) return source.failure;
  const value = cloneJson(source.value);
  state.copied += jsonByteLength(value);
  if (state.maxCopyBytes > 0 && state.copied > state.maxCopyBytes) {
    return `Unable to complete the copy, the accumulated size increase of copy is ${state.copied}, exceeding the limit ${state.maxCopyBytes}`;
  }
  return add(state, path, tokens, value, "copy");
}
