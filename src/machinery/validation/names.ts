// String rules for names, label keys and values, each returning upstream's
// error messages (an empty list when valid), plus generateName's random suffix.
// Messages follow k8s.io/apimachinery/pkg/util/validation and api/validate/content.

import { randomFillSync } from "node:crypto";

/** `must be no more than N characters`. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/**
 * `<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')` — the double
 * space is upstream's (each example ends in ", " and the next starts with " or ").
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let s = msg + " (e.g. ";
  examples.forEach((e, i) => {
    if (i > 0) s += " or ";
    s += `'${e}', `;
  });
  return s + `regex used for validation is '${fmt}')`;
}

/** `must be non-empty`. */
export function emptyError(): string {
  return "must be non-empty";
}

// Go's len() counts bytes; names are usually ASCII, so only pay for encoding when not.
function byteLength(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, "utf8");
  return s.length;
}

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
export const DNS1123_LABEL_MAX_LENGTH = 63;

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
export const DNS1035_LABEL_MAX_LENGTH = 63;

/** RFC 1123 label (namespace names, most name fields): at most 63 characters. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is not a valid label can only be wrong by its dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"));
  }
  return errs;
}

/** RFC 1123 subdomain (most object names): at most 253 characters. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
  return errs;
}

/** RFC 1035 label (service names): starts with a letter, at most 63 characters. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"));
  return errs;
}

const LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_NAME_MAX_LENGTH = 63;
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const LABEL_VALUE_MAX_LENGTH = 63;

function isAlnum(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

// A hand-written scan: label keys and values are validated on every write and selector parse.
function isValidLabelKeyName(s: string): boolean {
  const n = s.length;
  if (n === 0 || !isAlnum(s.charCodeAt(0)) || !isAlnum(s.charCodeAt(n - 1))) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = s.charCodeAt(i);
    if (!isAlnum(c) && c !== 0x2d && c !== 0x5f && c !== 0x2e) return false;
  }
  return true;
}

/**
 * A qualified name (label and annotation keys, finalizers): an optional DNS
 * subdomain prefix and '/', then a name of at most 63 characters.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  let name = value;
  const slash = value.indexOf("/");
  if (slash >= 0) {
    const prefix = value.slice(0, slash);
    name = value.slice(slash + 1);
    if (name.indexOf("/") >= 0) {
      return [
        "a valid label key " +
          regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc") +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ];
    }
    if (prefix.length === 0) errs.push("prefix part " + emptyError());
    else for (const m of isDNS1123Subdomain(prefix)) errs.push("prefix part " + m);
  }
  if (name.length === 0) errs.push("name part " + emptyError());
  else if (byteLength(name) > LABEL_KEY_NAME_MAX_LENGTH) errs.push("name part " + maxLenError(LABEL_KEY_NAME_MAX_LENGTH));
  if (!isValidLabelKeyName(name)) errs.push("name part " + regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc"));
  return errs;
}

/** Label keys are qualified names. */
export const isLabelKey = isQualifiedName;

/** A label value: empty, or at most 63 characters of [-A-Za-z0-9_.] starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (value.length > 0 && !isValidLabelKeyName(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  return errs;
}

/**
 * Names used as a path segment (in URLs and storage keys) may not be `.` or `..`
 * and may not contain `/` or `%`.
 */
export function isValidPathSegmentName(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

/** A generateName prefix: `.`/`..` are fine (a suffix follows), `/` and `%` are not. */
export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  if (name.includes("/")) errs.push("may not contain '/'");
  if (name.includes("%")) errs.push("may not contain '%'");
  return errs;
}

/**
 * A generateName prefix may end in '-' (the random suffix follows); upstream
 * masks that before validating, replacing the last two characters with "a".
 */
export function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith("-")) return name.slice(0, -2) + "a";
  return name;
}

/** A ValidateNameFunc: `prefix` is true when validating a generateName. */
export type NameValidator = (name: string, prefix: boolean) => string[];

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);
/** Namespace names are DNS labels. */
export const validateNamespaceName: NameValidator = nameIsDNSLabel;

/** upstream's utilrand alphabet: no vowels (no accidental words), no look-alikes (0/o, 1/l, 3/e). */
export const GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
export const GENERATE_NAME_RANDOM_LENGTH = 5;
/** upstream keeps generated names within a DNS label, whatever the resource's own limit. */
export const GENERATED_NAME_MAX_LENGTH = 63;

/**
 * `base` plus 5 random characters, the base truncated so the whole fits
 * `maxLength` (default 63, as upstream's SimpleNameGenerator).
 */
export function generateName(base: string, maxLength = GENERATED_NAME_MAX_LENGTH): string {
  const room = Math.max(0, maxLength - GENERATE_NAME_RANDOM_LENGTH);
  const prefix = base.length > room ? base.slice(0, room) : base;
  return prefix + randomSuffix(GENERATE_NAME_RANDOM_LENGTH);
}

// Random bytes come from the system 4 KiB at a time, each byte used once: a
// randomBytes() call per generated name was 1.6 % of the API server's CPU when creating pods with
// generateName (the call into the system, plus a buffer per name).
const RANDOM_POOL_BYTES = 4096;
const randomPool = Buffer.alloc(RANDOM_POOL_BYTES);
let randomPoolAt = RANDOM_POOL_BYTES;

/** One fresh random byte; every byte of the pool is used once. */
function randomByte(): number {
  if (randomPoolAt === RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomPoolAt = 0;
  }
  return randomPool[randomPoolAt++]!;
}

function randomSuffix(n: number): string {
  const alphabet = GENERATE_NAME_ALPHABET;
  // Rejection sampling keeps the 27-letter alphabet uniform over random bytes.
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < n) {
    const b = randomByte();
    if (b < limit) out += alphabet[b % alphabet.length];
  }
  return out;
}
