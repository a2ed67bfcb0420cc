// Label selectors: the `labelSelector` query grammar (`a=b`, `a!=b`, `a in (x,y)`,
// `a notin (x)`, `a`, `!a`, `a>1`, comma = AND) and LabelSelector objects
// (matchLabels/matchExpressions). Parse errors carry upstream's exact text; a
// parsed selector is compiled once into predicates, since it filters every watch event.

import { badRequest } from "./errors.js";
import { aggregateFieldErrors, field } from "./field-errors.js";
import type { FieldError } from "./field-errors.js";
import { isQualifiedName, isValidLabelValue } from "./validation/names.js";

/** upstream's selection.Operator values. */
export type LabelOperator = "in" | "notin" | "=" | "==" | "!=" | "exists" | "!" | "gt" | "lt";

export type Labels = Readonly<Record<string, string>>;

export interface Requirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** One value for =, ==, !=, gt, lt; one or more for in/notin; none for exists and !. */
  readonly values: readonly string[];
}

export interface Selector {
  /** True when the selector does not restrict anything (matches every object). */
  readonly empty: boolean;
  readonly requirements: readonly Requirement[];
  matches(labels: Labels | null | undefined): boolean;
  /** The single value the selector requires for `key` (=, == or a one-value in), if any. */
  requiresExactMatch(key: string): string | undefined;
  /** Canonical form: requirements sorted by key, set values sorted. */
  toString(): string;
}

/** LabelSelector as it appears in object specs (metav1.LabelSelector). */
export interface LabelSelector {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: LabelSelectorRequirement[] | null;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | (string & {});
  values?: string[] | null;
}

const BINARY_OPERATORS: readonly LabelOperator[] = ["in", "notin", "=", "==", "!=", "gt", "lt"];
const ALL_OPERATORS: readonly LabelOperator[] = [...BINARY_OPERATORS, "exists", "!"];

// --- requirements ------------------------------------------------------------

const INT64 = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function parseInt64(s: string): bigint | undefined {
  if (!INT64.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

function requirementErrors(key: string, op: LabelOperator, values: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  const keyMsgs = isQualifiedName(key);
  if (keyMsgs.length > 0) errs.push(field.invalid("key", key, keyMsgs.join("; ")));
  // An empty Go slice passed through append([]string(nil), ...) marshals as null.
  const shown = values.length === 0 ? null : values;
  switch (op) {
    case "in":
    case "notin":
      if (values.length === 0) errs.push(field.invalid("values", shown, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1) errs.push(field.invalid("values", shown, "exact-match compatibility requires one single value"));
      break;
    case "exists":
    case "!":
      if (values.length !== 0) errs.push(field.invalid("values", shown, "values set must be empty for exists and does not exist"));
      break;
    case "gt":
    case "lt":
      if (values.length !== 1) errs.push(field.invalid("values", shown, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(field.invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(field.notSupported("operator", op, ALL_OPERATORS));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(field.invalid(`values[${i}][${key}]`, v, msgs.join("; ")));
  });
  return errs;
}

/** A validated requirement (upstream's NewRequirement); 400 with the aggregated errors otherwise. */
export function newRequirement(key: string, operator: LabelOperator, values: readonly string[] = []): Requirement {
  const errs = requirementErrors(key, operator, values);
  if (errs.length > 0) throw badRequest(aggregateFieldErrors(errs));
  return Object.freeze({ key, operator, values: Object.freeze([...values]) });
}

function sortedValues(values: readonly string[]): readonly string[] {
  for (let i = 1; i < values.length; i++) if (values[i - 1]! > values[i]!) return [...values].sort();
  return values;
}

/** One requirement as text: `a=b`, `a in (x,y)`, `!a`, ... (upstream's Requirement.String). */
export function requirementToString(r: Requirement): string {
  switch (r.operator) {
    case "exists":
      return r.key;
    case "!":
      return "!" + r.key;
  }
  const op = { "=": "=", "==": "==", "!=": "!=", in: " in ", notin: " notin ", gt: ">", lt: "<" }[r.operator];
  const vals = r.values.length === 1 ? r.values[0]! : sortedValues(r.values).join(",");
  return r.operator === "in" || r.operator === "notin" ? `${r.key}${op}(${vals})` : `${r.key}${op}${vals}`;
}

type Predicate = (labels: Labels) => boolean;

// A label is present only as an own string property ("constructor" must not hit the prototype).
function lookup(labels: Labels, key: string): string | undefined {
  const v = labels[key];
  return typeof v === "string" ? v : undefined;
}

function compile(r: Requirement): Predicate {
  const { key, values } = r;
  switch (r.operator) {
    case "=":
    case "==":
    case "in": {
      if (values.length === 1) {
        const want = values[0]!;
        return (l) => lookup(l, key) === want;
      }
      const set = new Set(values);
      return (l) => {
        const v = lookup(l, key);
        return v !== undefined && set.has(v);
      };
    }
    case "!=":
    case "notin": {
      if (values.length === 1) {
        const not = values[0]!;
        return (l) => lookup(l, key) !== not;
      }
      const set = new Set(values);
      return (l) => {
        const v = lookup(l, key);
        return v === undefined || !set.has(v);
      };
    }
    case "exists":
      return (l) => lookup(l, key) !== undefined;
    case "!":
      return (l) => lookup(l, key) === undefined;
    case "gt":
    case "lt": {
      const bound = values.length === 1 ? parseInt64(values[0]!) : undefined;
      if (bound === undefined) return () => false;
      const gt = r.operator === "gt";
      return (l) => {
        const v = lookup(l, key);
        const n = v === undefined ? undefined : parseInt64(v);
        if (n === undefined) return false;
        return gt ? n > bound : n < bound;
      };
    }
  }
}

class CompiledSelector implements Selector {
  readonly requirements: readonly Requirement[];
  readonly empty: boolean;
  readonly #predicates: readonly Predicate[];
  #text: string | undefined;

  constructor(requirements: readonly Requirement[]) {
    // Sorted by key (stable), as upstream, so the string form is deterministic.
    this.requirements = Object.freeze([...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
    this.empty = this.requirements.length === 0;
    this.#predicates = this.requirements.map(compile);
  }

  matches(labels: Labels | null | undefined): boolean {
    const preds = this.#predicates;
    if (preds.length === 0) return true;
    const l = labels ?? EMPTY_LABELS;
    for (let i = 0; i < preds.length; i++) if (!preds[i]!(l)) return false;
    return true;
  }

  requiresExactMatch(key: string): string | undefined {
    for (const r of this.requirements) {
      if (r.key !== key) continue;
      if ((r.operator === "=" || r.operator === "==" || r.operator === "in") && r.values.length === 1) return r.values[0];
      return undefined;
    }
    return undefined;
  }

  toString(): string {
    return (this.#text ??= this.requirements.map(requirementToString).join(","));
  }
}

const EMPTY_LABELS: Labels = Object.freeze({});

const NOTHING: Selector = Object.freeze({
  empty: false,
  requirements: Object.freeze([]) as readonly Requirement[],
  matches: () => false,
  requiresExactMatch: () => undefined,
  toString: () => "",
});

const EVERYTHING: Selector = new CompiledSelector([]);

/** Matches every object. */
export function everything(): Selector {
  return EVERYTHING;
}

/** Matches no object (a null LabelSelector). */
export function nothing(): Selector {
  return NOTHING;
}

/** A selector from already validated requirements. */
export function selectorFromRequirements(requirements: readonly Requirement[]): Selector {
  return requirements.length === 0 ? EVERYTHING : new CompiledSelector(requirements);
}

/** `k1=v1,k2=v2` for a label set (not validated, as upstream's SelectorFromSet). */
export function selectorFromSet(set: Labels | null | undefined): Selector {
  if (!set) return EVERYTHING;
  const keys = Object.keys(set);
  if (keys.length === 0) return EVERYTHING;
  return new CompiledSelector(keys.map((k) => Object.freeze({ key: k, operator: "=" as const, values: Object.freeze([set[k]!]) })));
}

const EXPRESSION_OPERATORS: Record<string, LabelOperator> = { In: "in", NotIn: "notin", Exists: "exists", DoesNotExist: "!" };

/**
 * A LabelSelector object as a Selector (upstream's LabelSelectorAsSelector): null
 * matches nothing, an empty one everything; invalid requirements are a 400.
 */
export function selectorFromLabelSelector(ls: LabelSelector | null | undefined): Selector {
  if (ls === null || ls === undefined) return NOTHING;
  const matchLabels = ls.matchLabels ?? {};
  const exprs = ls.matchExpressions ?? [];
  const keys = Object.keys(matchLabels).sort();
  if (keys.length + exprs.length === 0) return EVERYTHING;
  const reqs: Requirement[] = keys.map((k) => newRequirement(k, "=", [matchLabels[k]!]));
  for (const e of exprs) {
    const op = Object.hasOwn(EXPRESSION_OPERATORS, e.operator) ? EXPRESSION_OPERATORS[e.operator] : undefined;
    if (op === undefined) throw badRequest(`${JSON.stringify(e.operator)} is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, e.values ?? []));
  }
  return new CompiledSelector(reqs);
}

// --- the string grammar ----------------------------------------------------

const enum Tok {
  Error,
  End,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const KEYWORDS: Record<string, Tok> = {
  ")": Tok.ClosedPar,
  ",": Tok.Comma,
  "!": Tok.DoesNotExist,
  "==": Tok.DoubleEquals,
  "=": Tok.Equals,
  ">": Tok.GreaterThan,
  in: Tok.In,
  "<": Tok.LessThan,
  "!=": Tok.NotEquals,
  notin: Tok.NotIn,
  "(": Tok.OpenPar,
};

function keyword(s: string): Tok | undefined {
  return Object.hasOwn(KEYWORDS, s) ? KEYWORDS[s] : undefined;
}

function isWhitespace(c: string): boolean {
  return c === " " || c === "\t" || c === "\r" || c === "\n";
}

function isSpecial(c: string): boolean {
  return c === "=" || c === "!" || c === "(" || c === ")" || c === "," || c === ">" || c === "<";
}

interface Item {
  tok: Tok;
  lit: string;
}

function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++;
    if (pos >= s.length) {
      items.push({ tok: Tok.End, lit: "" });
      return items;
    }
    if (isSpecial(s[pos]!)) {
      // Longest run of special characters that is still an operator.
      let buf = "";
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos]!)) {
        buf += s[pos]!;
        const t = keyword(buf);
        if (t !== undefined) {
          last = { tok: t, lit: buf };
          pos++;
        } else if (last) {
          break;
        } else {
          pos++;
        }
      }
      items.push(last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buf}'` });
      continue;
    }
    const start = pos;
    while (pos < s.length && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) pos++;
    const word = s.slice(start, pos);
    items.push({ tok: keyword(word) ?? Tok.Identifier, lit: word });
  }
}

const enum Ctx {
  KeyAndOperator,
  Values,
}

class ParseError extends Error {}

class Parser {
  readonly #items: Item[];
  #pos = 0;
  constructor(input: string) {
    this.#items = lex(input);
  }

  // In a values context `in` and `notin` are plain identifiers (`x in (in)`).
  #view(item: Item, ctx: Ctx): Item {
    if (ctx === Ctx.Values && (item.tok === Tok.In || item.tok === Tok.NotIn)) return { tok: Tok.Identifier, lit: item.lit };
    return item;
  }
  lookahead(ctx: Ctx): Item {
    return this.#view(this.#items[this.#pos]!, ctx);
  }
  consume(ctx: Ctx): Item {
    const item = this.#items[this.#pos]!;
    if (this.#pos < this.#items.length - 1) this.#pos++;
    return this.#view(item, ctx);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(Ctx.Values);
      switch (tok) {
        case Tok.Identifier:
        case Tok.DoesNotExist: {
          let r: Requirement;
          try {
            r = this.parseRequirement();
          } catch (e) {
            throw new ParseError(`unable to parse requirement: ${(e as Error).message}`);
          }
          reqs.push(r);
          const next = this.consume(Ctx.Values);
          if (next.tok === Tok.End) return reqs;
          if (next.tok === Tok.Comma) {
            const after = this.lookahead(Ctx.Values);
            if (after.tok !== Tok.Identifier && after.tok !== Tok.DoesNotExist) {
              throw new ParseError(`found '${after.lit}', expected: identifier after ','`);
            }
            continue;
          }
          throw new ParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
        }
        case Tok.End:
          return reqs;
        default:
          throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  parseRequirement(): Requirement {
    const { key, op } = this.parseKeyAndInferOperator();
    if (op === "exists" || op === "!") return this.#require(key, op, []);
    const operator = this.parseOperator();
    const values = operator === "in" || operator === "notin" ? this.parseValues() : this.parseExactValue();
    // Values form a set: deduplicated and sorted, as upstream's sets.String.List().
    return this.#require(key, operator, [...values].sort());
  }

  #require(key: string, op: LabelOperator, values: string[]): Requirement {
    const errs = requirementErrors(key, op, values);
    if (errs.length > 0) throw new ParseError(aggregateFieldErrors(errs));
    return Object.freeze({ key, operator: op, values: Object.freeze(values) });
  }

  parseKeyAndInferOperator(): { key: string; op: LabelOperator | undefined } {
    let op: LabelOperator | undefined;
    let item = this.consume(Ctx.Values);
    if (item.tok === Tok.DoesNotExist) {
      op = "!";
      item = this.consume(Ctx.Values);
    }
    if (item.tok !== Tok.Identifier) throw new ParseError(`found '${item.lit}', expected: identifier`);
    const msgs = isQualifiedName(item.lit);
    // The parser validates keys without a field path, which upstream prints as <nil>.
    if (msgs.length > 0) throw new ParseError(aggregateFieldErrors([field.invalid("<nil>", item.lit, msgs.join("; "))]));
    const next = this.lookahead(Ctx.Values).tok;
    if ((next === Tok.End || next === Tok.Comma) && op !== "!") op = "exists";
    return { key: item.lit, op };
  }

  parseOperator(): LabelOperator {
    const { tok, lit } = this.consume(Ctx.KeyAndOperator);
    switch (tok) {
      case Tok.In: return "in";
      case Tok.Equals: return "=";
      case Tok.DoubleEquals: return "==";
      case Tok.GreaterThan: return "gt";
      case Tok.LessThan: return "lt";
      case Tok.NotIn: return "notin";
      case Tok.NotEquals: return "!=";
    }
    throw new ParseError(`found '${lit}', expected: ${BINARY_OPERATORS.join(", ")}`);
  }

  parseValues(): Set<string> {
    const open = this.consume(Ctx.Values);
    if (open.tok !== Tok.OpenPar) throw new ParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(Ctx.Values);
    switch (tok) {
      case Tok.Identifier:
      case Tok.Comma: {
        const set = this.parseIdentifiersList();
        if (this.consume(Ctx.Values).tok !== Tok.ClosedPar) throw new ParseError(`found '${lit}', expected: ')'`);
        return set;
      }
      case Tok.ClosedPar:
        this.consume(Ctx.Values);
        return new Set([""]); // `x in ()` means the empty value
      default:
        throw new ParseError(`found '${lit}', expected: ',', ')' or identifier`);
    }
  }

  // A comma-separated list of possibly empty identifiers: `(a,,b)`, `(,a)`, `(a,)`.
  parseIdentifiersList(): Set<string> {
    const set = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(Ctx.Values);
      if (tok === Tok.Identifier) {
        set.add(lit);
        const next = this.lookahead(Ctx.Values);
        if (next.tok === Tok.Comma) continue;
        if (next.tok === Tok.ClosedPar) return set;
        throw new ParseError(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok === Tok.Comma) {
        if (set.size === 0) set.add("");
        const next = this.lookahead(Ctx.Values).tok;
        if (next === Tok.ClosedPar) {
          set.add("");
          return set;
        }
        if (next === Tok.Comma) set.add("");
        continue;
      }
      throw new ParseError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  parseExactValue(): Set<string> {
    const ahead = this.lookahead(Ctx.Values).tok;
    if (ahead === Tok.End || ahead === Tok.Comma) return new Set([""]);
    const { tok, lit } = this.consume(Ctx.Values);
    if (tok === Tok.Identifier) return new Set([lit]);
    throw new ParseError(`found '${lit}', expected: identifier`);
  }
}

/**
 * Parses a `labelSelector` query value (upstream's labels.Parse). Malformed
 * input is a 400 whose message is upstream's, e.g. `unable to parse requirement: ...`.
 */
export function parseSelector(selector: string): Selector {
  let reqs: Requirement[];
  try {
    reqs = new Parser(selector).parse();
  } catch (e) {
    if (e instanceof ParseError) throw badRequest(e.message);
    throw e;
  }
  return selectorFromRequirements(reqs);
}
