// Go's value formatting, reproduced where upstream messages embed values:
// `%q` (strconv.Quote), `%v` of numbers, and encoding/json for composite values.
// Clients compare these messages byte for byte, so the quirks matter.

/** Go's strconv.Quote: a double-quoted string with Go escapes (`%q`). */
export function goQuote(s: string): string {
  // Fast path: printable ASCII without quote or backslash needs no escaping.
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) {
      plain = false;
      break;
    }
  }
  if (plain) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (cp) {
      case 0x22: out += '\\"'; continue;
      case 0x5c: out += "\\\\"; continue;
      case 0x07: out += "\\a"; continue;
      case 0x08: out += "\\b"; continue;
      case 0x0c: out += "\\f"; continue;
      case 0x0a: out += "\\n"; continue;
      case 0x0d: out += "\\r"; continue;
      case 0x09: out += "\\t"; continue;
      case 0x0b: out += "\\v"; continue;
    }
    if (cp < 0x20 || cp === 0x7f) {
      out += "\\x" + cp.toString(16).padStart(2, "0");
    } else if (cp >= 0xd800 && cp <= 0xdfff) {
      out += "\\ufffd"; // a lone surrogate is not valid UTF-8; Go would see the replacement rune
    } else if (cp < 0x80 || PRINTABLE.test(ch)) {
      out += ch;
    } else if (cp < 0x10000) {
      out += "\\u" + cp.toString(16).padStart(4, "0");
    } else {
      out += "\\U" + cp.toString(16).padStart(8, "0");
    }
  }
  return out + '"';
}

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols (and ASCII space).
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's `%v` for a number: integers as decimals, other floats in shortest `%g` form. */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "+Inf" : "-Inf";
  const [mantissa, expText] = n.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  // %v uses %e when the exponent is < -4 or >= 6 (fmt's "shortest" precision rule).
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(n);
}

/**
 * Go's encoding/json output for a decoded JSON value: object keys sorted (Go
 * maps), `<`, `>`, `&`, U+2028 and U+2029 escaped as \u sequences.
 */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return goJsonString(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    case "object": {
      if (Array.isArray(value)) return "[" + value.map(goJson).join(",") + "]";
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      return "{" + keys.map((k) => goJsonString(k) + ":" + goJson(obj[k])).join(",") + "}";
    }
    default:
      return "null";
  }
}

function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}
