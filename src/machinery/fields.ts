// Field selectors: the `fieldSelector` query grammar (`a=b`, `a==b`, `a!=b`, comma
// = AND, values escaped with `\,` `\=` `\\`), as upstream's fields.ParseSelector.
// kubectl pins single objects with `metadata.name=X`; pinnedName() detects that.

import { badRequest } from "./errors.js";

export type FieldOperator = "=" | "==" | "!=";

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  /** The unescaped value. */
  readonly value: string;
}

/** The selectable fields of one object, e.g. `{"metadata.name": "x", "status.phase": "Running"}`. */
export type Fields = Readonly<Record<string, string>>;

export interface FieldSelector {
  readonly empty: boolean;
  readonly requirements: readonly FieldRequirement[];
  /** A missing field reads as "" (so `a=` matches objects without `a`). */
  matches(fields: Fields): boolean;
  /** The value an `=`/`==` term requires for `field`, if any. */
  requiresExactMatch(field: string): string | undefined;
  /** Canonical form, values escaped. */
  toString(): string;
}

/** Escapes `\`, `,` and `=` in a value (upstream's EscapeValue). */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => "\\" + c);
}

/** Reverses escapeFieldValue; unescaped `,`/`=` and unknown escapes are a 400. */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = "";
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== "\\" && c !== "," && c !== "=") throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
      continue;
    }
    if (c === "\\") inSlash = true;
    else if (c === "," || c === "=") {
      // upstream formats the rune with %v, which prints its code point.
      throw badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (inSlash) throw badRequest("invalid field selector: invalid escape sequence: \\");
  return out;
}

// Splits on commas not preceded by a backslash escape; the escapes stay in the terms.
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === "\\") inSlash = true;
    else if (c === ",") {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

// The first operator occurrence splits the term; `!=` and `==` are tried before `=`.
function splitTerm(term: string): [string, FieldOperator, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term.startsWith("!=", i)) return [term.slice(0, i), "!=", term.slice(i + 2)];
    if (term.startsWith("==", i)) return [term.slice(0, i), "==", term.slice(i + 2)];
    if (term[i] === "=") return [term.slice(0, i), "=", term.slice(i + 1)];
  }
  return undefined;
}

function termToString(r: FieldRequirement): string {
  return `${r.field}${r.operator === "!=" ? "!=" : "="}${escapeFieldValue(r.value)}`;
}

class CompiledFieldSelector implements FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  #text: string | undefined;
  constructor(requirements: readonly FieldRequirement[]) {
    this.requirements = Object.freeze([...requirements]);
    this.empty = requirements.length === 0;
  }
  matches(fields: Fields): boolean {
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      const v = fields[r.field];
      const actual = typeof v === "string" ? v : "";
      if ((actual === r.value) === (r.operator === "!=")) return false;
    }
    return true;
  }
  requiresExactMatch(fieldName: string): string | undefined {
    for (const r of this.requirements) if (r.field === fieldName && r.operator !== "!=") return r.value;
    return undefined;
  }
  toString(): string {
    return (this.#text ??= this.requirements.map(termToString).join(","));
  }
}

const EVERYTHING: FieldSelector = new CompiledFieldSelector([]);

/** Matches every object. */
export function everythingFields(): FieldSelector {
  return EVERYTHING;
}

/** A selector requiring each field to equal its value. */
export function fieldSelectorFromSet(set: Fields): FieldSelector {
  const keys = Object.keys(set);
  if (keys.length === 0) return EVERYTHING;
  return new CompiledFieldSelector(keys.map((k) => ({ field: k, operator: "=" as const, value: set[k]! })));
}

/**
 * Parses a `fieldSelector` query value. Terms are sorted by their raw text, as
 * upstream; a term without an operator is a 400
 * (`invalid selector: 'abc'; can't understand 'abc'`).
 */
export function parseFieldSelector(selector: string): FieldSelector {
  const parts = splitTerms(selector).sort();
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === "") continue;
    const split = splitTerm(part);
    if (!split) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    const [lhs, op, rhs] = split;
    reqs.push(Object.freeze({ field: lhs, operator: op, value: unescapeFieldValue(rhs) }));
  }
  return reqs.length === 0 ? EVERYTHING : new CompiledFieldSelector(reqs);
}

/**
 * The object name a selector pins with `metadata.name=X` (kubectl's way of
 * getting and watching one object), or undefined.
 */
export function pinnedName(selector: FieldSelector): string | undefined {
  return selector.requiresExactMatch("metadata.name");
}
