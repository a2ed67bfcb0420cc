// YAML request bodies and responses with the `yaml` package, made safe for
// hostile input: size, nesting (checked before the library sees the text) and
// alias limits; one document; JSON values only (YAML 1.1 scalars as upstream's
// go-yaml v2 reads them, timestamps stay strings); duplicate keys collected, not fatal.

import { Document, isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import type { Node as YamlNode, ParsedNode, Scalar, Tags } from "yaml";
import { badRequest, requestEntityTooLarge, goQuote } from "../index.js";
import { MAX_BODY_BYTES, type ParsedBody } from "./json.js";
import { MAX_OBJECT_DEPTH, exceedsDepth, mayHoldSurrogateEscape, wellFormedStrings } from "../object-depth.js";

/** Nesting beyond this is refused before parsing (the library recurses, and overflows near 800 levels), and after (aliases nest). */
export const MAX_YAML_DEPTH = MAX_OBJECT_DEPTH;
/** The library's default; a billion-laughs document needs millions. */
export const MAX_YAML_ALIAS_COUNT = 100;

export interface YamlParseOptions {
  readonly maxBytes?: number;
  readonly maxDepth?: number;
  /** Limit on alias expansions, `yaml`'s maxAliasCount (-1 disables: never do that for requests). */
  readonly maxAliasCount?: number;
}

export interface YamlDuplicateKey {
  /** Path as in ParsedBody.duplicates (`spec.replicas`). */
  readonly path: string;
  /** The key as written, and its 1-based line (the second occurrence). */
  readonly key: string;
  readonly line: number;
}

export interface ParsedYamlBody extends ParsedBody {
  /** The duplicates with their lines, for upstream's YAML wording (see yamlDuplicateMessage). */
  readonly duplicateKeys: YamlDuplicateKey[];
}

/**
 * Upstream's wording of a duplicate key in a YAML body (go-yaml's strict
 * mode): `line 5: key "name" already set in map`.
 */
export function yamlDuplicateMessage(d: YamlDuplicateKey): string {
  return `line ${d.line}: key ${goQuote(d.key)} already set in map`;
}

// YAML 1.1 as go-yaml v2 resolves plain scalars (yes/no/on/off booleans, 0777
// octal, 0x hex), minus what has no JSON form or no place in an API object:
// timestamps (kept as strings, as upstream does for untyped targets),
// sexagesimal numbers, !!binary, !!set, !!omap, !!pairs.
const DROPPED_TAGS = new Set([
  "tag:yaml.org,2002:timestamp",
  "tag:yaml.org,2002:binary",
  "tag:yaml.org,2002:set",
  "tag:yaml.org,2002:omap",
  "tag:yaml.org,2002:pairs",
]);
const requestTags = (tags: Tags): Tags =>
  tags.filter((t) => typeof t === "string" || (!DROPPED_TAGS.has(t.tag) && !("format" in t && t.format === "TIME")));

/**
 * Parse a YAML request body. Throws ApiError 413 above `maxBytes`, 400 for a
 * syntax error (with line and column), several documents, nesting, alias
 * abuse, or values JSON cannot hold (`.inf`, collection keys).
 */
export function parseYamlBody(body: string | Buffer, options: YamlParseOptions = {}): ParsedYamlBody {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const size = typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length;
  if (size > maxBytes) throw requestEntityTooLarge(`the request body is ${size} bytes, over the limit of ${maxBytes} bytes`);
  const text = typeof body === "string" ? body : body.toString("utf8");

  const maxDepth = options.maxDepth ?? MAX_YAML_DEPTH;
  const deepLine = yamlTooDeep(text, maxDepth);
  if (deepLine > 0) throw badRequest(`yaml: line ${deepLine}: exceeded max depth of ${maxDepth}`);

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    schema: "yaml-1.1",
    customTags: requestTags,
    resolveKnownTags: false, // or explicit !!binary, !!set, !!timestamp would still build non-JSON values
    uniqueKeys: false, // duplicates are collected below and reported by field validation
    merge: true,
    prettyErrors: false,
    lineCounter,
  });
  const first = doc.errors[0];
  if (first !== undefined) {
    if (first.code === "MULTIPLE_DOCS") {
      throw badRequest(`yaml: line ${lineCounter.linePos(first.pos[0]).line}: the request body must hold a single YAML document`);
    }
    const { line, col } = lineCounter.linePos(first.pos[0]);
    throw badRequest(`yaml: line ${line}, column ${col}: ${errorText(first.message)}`);
  }

  const duplicateKeys = collectDuplicates(doc, lineCounter);

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: options.maxAliasCount ?? MAX_YAML_ALIAS_COUNT });
  } catch (err) {
    if (err instanceof ReferenceError && /alias/i.test(err.message)) {
      // go-yaml's wording for the same attack, and the library's reason.
      throw badRequest(`yaml: document contains excessive aliasing: ${err.message}`);
    }
    throw badRequest(`yaml: ${errorText((err as Error).message)}`);
  }
  checkJsonable(value);
  // Aliases can nest a deep node inside another: the tree, not the text, is what must stay under the limit.
  if (exceedsDepth(value, maxDepth)) throw badRequest(`yaml: exceeded max depth of ${maxDepth} (through aliases)`);
  if (mayHoldSurrogateEscape(text)) wellFormedStrings(value);
  return { value: value ?? null, duplicates: duplicateKeys.map((d) => d.path), duplicateKeys };
}

/** The library's message without its appended location. */
function errorText(message: string): string {
  const at = message.search(/ at line \d+, column \d+/);
  return at >= 0 ? message.slice(0, at) : message;
}

/**
 * Walk the syntax tree (aliases not followed, so it stays linear) for keys
 * set twice in one map, with the JSON key they become. Collection keys have
 * no JSON form and are refused here, as upstream's YAML-to-JSON conversion does.
 */
function collectDuplicates(doc: Document.Parsed, lines: LineCounter): YamlDuplicateKey[] {
  const out: YamlDuplicateKey[] = [];
  const stack: Array<[YamlNode | null, string]> = [[doc.contents, ""]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (isMap(node)) {
      const seen = new Set<string>();
      const children: Array<[YamlNode | null, string]> = [];
      for (const pair of node.items) {
        let key: unknown = pair.key;
        if (isAlias(key)) key = key.resolve(doc);
        if (isScalar(key) && key.type === "PLAIN" && key.source === "<<") continue; // merge key
        const name = jsonKey(key);
        const child = path === "" ? name : `${path}.${name}`;
        if (seen.has(name)) {
          const range = (pair.key as ParsedNode).range;
          out.push({ path: child, key: name, line: range ? lines.linePos(range[0]).line : 0 });
        } else seen.add(name);
        children.push([pair.value as YamlNode | null, child]);
      }
      // Reverse so the stack pops them in document order.
      for (let k = children.length - 1; k >= 0; k--) stack.push(children[k]!);
    } else if (isSeq(node)) {
      for (let k = node.items.length - 1; k >= 0; k--) stack.push([node.items[k] as YamlNode | null, `${path}[${k}]`]);
    }
  }
  return out;
}

/** The JSON object key a YAML key becomes (go-yaml: booleans, numbers and null print as text). */
function jsonKey(key: unknown): string {
  if (key === null || key === undefined) return "null";
  if (isScalar(key)) {
    const v = (key as Scalar).value;
    if (v === null) return "null";
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  }
  throw badRequest(`yaml: invalid map key: ${String(key)}`);
}

/** Values JSON cannot carry: go-yaml reads them, and the JSON step upstream then fails. */
function checkJsonable(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw badRequest(`yaml: unsupported value: ${v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN"}`);
    } else if (typeof v === "bigint") {
      throw badRequest(`yaml: unsupported value: ${v}`);
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === "object") {
      if (v instanceof Uint8Array || v instanceof Date || v instanceof Map || v instanceof Set) {
        throw badRequest(`yaml: unsupported value of type ${v.constructor.name}`);
      }
      for (const item of Object.values(v)) stack.push(item);
    }
  }
}

/**
 * A bounded pre-scan: the 1-based line where nesting (block indentation
 * levels, compact `- ` entries and flow brackets) exceeds `max`, else 0. It
 * over-counts rather than under-counts, and costs one pass with no allocation
 * per character.
 */
export function yamlTooDeep(text: string, max: number): number {
  const indents: number[] = [];
  let flow = 0;
  let line = 0;
  let blockScalarIndent = -1; // >= 0 while inside a | or > scalar opened at that indent
  let pos = 0;
  const n = text.length;
  while (pos < n) {
    line++;
    let eol = text.indexOf("\n", pos);
    if (eol < 0) eol = n;
    let i = pos;
    while (i < eol && text.charCodeAt(i) === 0x20) i++;
    const indent = i - pos;
    const blank = i >= eol || text.charCodeAt(i) === 0x0d || (text.charCodeAt(i) === 0x23 && flow === 0);
    if (blockScalarIndent >= 0) {
      if (blank || indent > blockScalarIndent) {
        pos = eol + 1;
        continue;
      }
      blockScalarIndent = -1;
    }
    if (blank) {
      pos = eol + 1;
      continue;
    }
    let depth = 0;
    if (flow === 0) {
      while (indents.length > 0 && indents[indents.length - 1]! >= indent) indents.pop();
      indents.push(indent);
      // Compact nesting on one line: `- - - x`, `? - x`.
      while (i + 1 < eol && (text.charCodeAt(i) === 0x2d || text.charCodeAt(i) === 0x3f) && text.charCodeAt(i + 1) === 0x20) {
        depth++;
        i += 2;
        while (i < eol && text.charCodeAt(i) === 0x20) i++;
      }
    }
    // Flow brackets and quotes in the rest of the line.
    let prev = 0x20;
    for (; i < eol; i++) {
      const c = text.charCodeAt(i);
      // A token starts after whitespace, or after a flow indicator inside a flow collection;
      // elsewhere `[`, `{` and quotes are plain text (`x[[`, `it's`).
      const tokenStart = prev === 0x20 || prev === 0x09 || (flow > 0 && (prev === 0x5b || prev === 0x7b || prev === 0x2c || prev === 0x3a));
      if ((c === 0x27 || c === 0x22) && tokenStart) {
        // Quoted scalar: skip to its end on this line (a multi-line one only under-counts inside text).
        const close = text.indexOf(c === 0x27 ? "'" : '"', i + 1);
        i = close < 0 || close > eol ? eol : close;
      } else if (c === 0x23 && (prev === 0x20 || prev === 0x09)) {
        break; // comment
      } else if ((c === 0x5b || c === 0x7b) && tokenStart) {
        flow++;
      } else if ((c === 0x5d || c === 0x7d) && flow > 0) {
        flow--;
      } else if ((c === 0x7c || c === 0x3e) && tokenStart && flow === 0 && isBlockScalarHeader(text, i + 1, eol)) {
        blockScalarIndent = indent;
        break;
      }
      if (indents.length + depth + flow > max) return line;
      prev = c;
    }
    if (indents.length + depth + flow > max) return line;
    pos = eol + 1;
  }
  return 0;
}

/** After `|` or `>`: only chomping/indent indicators, spaces and a comment may follow. */
function isBlockScalarHeader(text: string, from: number, eol: number): boolean {
  for (let i = from; i < eol; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2b || c === 0x2d || (c >= 0x31 && c <= 0x39) || c === 0x0d) continue;
    if (c === 0x20 || c === 0x09) {
      while (i < eol && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09)) i++;
      return i >= eol || text.charCodeAt(i) === 0x23 || text.charCodeAt(i) === 0x0d;
    }
    return false;
  }
  return true;
}

// ---- output ---------------------------------------------------------------

export interface ToYamlOptions {
  /** Sort object keys, as upstream's output (go-yaml marshals maps sorted). Default: object order. */
  readonly sortKeys?: boolean;
}

/**
 * A JSON value as YAML the way upstream writes responses: block style, two
 * spaces, sequences not indented under their key, no line folding, strings
 * quoted only when a YAML 1.1 reader would otherwise see another type
 * (`"yes"`, `"0777"`, timestamps) or they need escaping.
 */
export function toYaml(value: unknown, options: ToYamlOptions = {}): string {
  // The library recurses and overflows near 600 levels; an object stored deeper than the decode limit (written by
  // an older server, or straight to etcd) is still served: as JSON, which is YAML too (a flow mapping), one line.
  if (exceedsDepth(value, YAML_OUTPUT_DEPTH)) return JSON.stringify(value) + "\n";
  // The full YAML 1.1 schema on output, so every string that 1.1 readers (kubectl's go-yaml) would retype gets quoted.
  const doc = new Document(value, { schema: "yaml-1.1", sortMapEntries: options.sortKeys === true, aliasDuplicateObjects: false });
  return doc.toString({ indentSeq: false, lineWidth: 0, minContentWidth: 0, defaultStringType: "PLAIN", defaultKeyType: "PLAIN", doubleQuotedMinMultiLineLength: Infinity });
}

/** Deeper than this, toYaml writes flow style (JSON): the block writer's recursion is safe well past it. */
const YAML_OUTPUT_DEPTH = 2 * MAX_OBJECT_DEPTH;
