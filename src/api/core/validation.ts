// Field rules shared by the core kinds (and by other groups' pod templates):
// DNS names, ports, protocols, config keys, enumerations — each returning
// upstream's FieldErrors and messages (k8s.io/apimachinery/pkg/util/validation).

import { field, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, maxLenError, regexError, type FieldError } from "../../machinery/index.js";
import type { IntOrString } from "./types.js";

export function validateDNS1123Label(value: string, path: string): FieldError[] {
  return isDNS1123Label(value).map((msg) => field.invalid(path, value, msg));
}

export function validateDNS1123Subdomain(value: string, path: string): FieldError[] {
  return isDNS1123Subdomain(value).map((msg) => field.invalid(path, value, msg));
}

export function validateQualifiedName(value: string, path: string): FieldError[] {
  return isQualifiedName(value).map((msg) => field.invalid(path, value, msg));
}

/** upstream's InclusiveRangeError. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** IANA_SVC_NAME: at most 15 characters, lower-case letters, digits and single inner hyphens, at least one letter. */
export function isValidPortName(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(name)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(name)) errs.push("must contain at least one letter (a-z)");
  if (name.includes("--")) errs.push("must not contain consecutive hyphens");
  if (name.startsWith("-") || name.endsWith("-")) errs.push("must not begin or end with a hyphen");
  return errs;
}

/** A port given as a number (1-65535) or an IANA_SVC_NAME. */
export function validatePortNumOrName(port: IntOrString | undefined | null, path: string): FieldError[] {
  if (typeof port === "number") return isValidPortNum(port).map((msg) => field.invalid(path, port, msg));
  if (typeof port === "string") return isValidPortName(port).map((msg) => field.invalid(path, port, msg));
  return [field.invalid(path, port ?? null, inclusiveRangeError(1, 65535))];
}

export const PROTOCOLS: readonly string[] = ["SCTP", "TCP", "UDP"];

/** Required, then one of TCP, UDP, SCTP. */
export function validateProtocol(protocol: string | undefined, path: string): FieldError[] {
  if (!protocol) return [field.required(path, "")];
  if (!PROTOCOLS.includes(protocol)) return [field.notSupported(path, protocol, PROTOCOLS)];
  return [];
}

/** Required, then one of `values` (listed in the order given, as upstream's message does). */
export function validateEnum(value: string | undefined | null, path: string, values: readonly string[], required = true): FieldError[] {
  if (value === undefined || value === null || value === "") return required ? [field.required(path, "")] : [];
  return values.includes(value) ? [] : [field.notSupported(path, value, values)];
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** Keys of config maps and secrets (upstream's IsConfigMapKey). */
export function isConfigMapKey(key: string): string[] {
  const errs: string[] = [];
  if (key.length > 253) errs.push(maxLenError(253));
  if (!CONFIG_KEY.test(key)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name"));
  }
  if (key === ".") errs.push("must not be '.'");
  else if (key === "..") errs.push("must not be '..'");
  else if (key.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}

export function validateNonnegative(value: number | undefined | null, path: string): FieldError[] {
  if (typeof value === "number" && value < 0) return [field.invalid(path, value, "must be greater than or equal to 0")];
  return [];
}

/** Deep equality of JSON values; absent, undefined and null are the same (as after upstream's decoding). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!jsonEqual(ao[k], bo[k])) return false;
  return true;
}
