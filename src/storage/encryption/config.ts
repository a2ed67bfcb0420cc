// --encryption-provider-config: upstream's EncryptionConfiguration
// (apiserver.config.k8s.io/v1, also under the profile's group suffix). Each
// entry names resources (`secrets`, `deployments.apps`, `*.apps`, `*.` for the
// core group, `*.*` for all) and their providers in order; the first entry
// naming a resource decides. Anything malformed stops the start with the
// file, the field path and upstream's message.

import { readFileSync } from "node:fs";
import { parseJsonBody, parseYamlBody } from "../../machinery/decode/index.js";
import { identityTransformer, keyTransformer, KEY_LENGTHS, PrefixTransformers, PROVIDERS, type ProviderType, type ValueTransformer } from "./providers.js";

export class EncryptionConfigError extends Error {}

export interface EncryptionRule {
  /** `resource.group` names as written; `*.group`, `*.` and `*.*` are wildcards. */
  readonly resources: readonly string[];
  readonly transformers: PrefixTransformers;
  /** The first provider's type: what new writes use. */
  readonly writes: ProviderType;
}

export interface EncryptionConfig {
  readonly rules: readonly EncryptionRule[];
  /** The transformers for a resource, or undefined when no rule names it (stored as is). */
  transformersFor(group: string, resource: string): PrefixTransformers | undefined;
}

/** The groups of the file's apiVersion: upstream's and the profile's. */
export function encryptionConfigGroups(groupSuffix: string): string[] {
  return [...new Set(["apiserver.config.k8s.io", `apiserver.config.${groupSuffix}`])];
}

export function loadEncryptionConfig(file: string, groupSuffix: string): EncryptionConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new EncryptionConfigError(`error while parsing file: ${(err as Error).message}`);
  }
  try {
    return parseEncryptionConfig(text, groupSuffix);
  } catch (err) {
    throw new EncryptionConfigError(`encryption provider config ${file}: ${(err as Error).message}`);
  }
}

export function parseEncryptionConfig(text: string, groupSuffix: string): EncryptionConfig {
  let value: unknown;
  try {
    value = text.trimStart().startsWith("{") ? parseJsonBody(text).value : parseYamlBody(text).value;
  } catch (err) {
    throw new EncryptionConfigError(`not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new EncryptionConfigError("EncryptionConfiguration can't be nil");
  const doc = value as Record<string, unknown>;
  const versions = encryptionConfigGroups(groupSuffix).map((g) => `${g}/v1`);
  if (!versions.includes(doc.apiVersion as string)) {
    throw new EncryptionConfigError(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? "")}: supported values: ${versions.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  if (doc.kind !== "EncryptionConfiguration") throw new EncryptionConfigError(`kind: Unsupported value: ${JSON.stringify(doc.kind ?? "")}: supported values: "EncryptionConfiguration"`);
  const entries = doc.resources;
  if (!Array.isArray(entries) || entries.length === 0) throw new EncryptionConfigError("resources: Required value: at least one resources is required");
  const seen = new Set<string>();
  const rules = entries.map((entry, i) => parseRule(entry, `resources[${i}]`, seen));
  return {
    rules,
    transformersFor(group, resource) {
      return rules.find((r) => r.resources.some((name) => matches(name, group, resource)))?.transformers;
    },
  };
}

function matches(name: string, group: string, resource: string): boolean {
  if (name === "*.*") return true;
  const dot = name.indexOf(".");
  const [r, g] = dot < 0 ? [name, ""] : [name.slice(0, dot), name.slice(dot + 1)];
  return g === group && (r === "*" || r === resource);
}

function parseRule(value: unknown, at: string, seen: Set<string>): EncryptionRule {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new EncryptionConfigError(`${at}: Invalid value: must be an object`);
  const entry = value as Record<string, unknown>;
  const names = entry.resources;
  if (!Array.isArray(names) || names.length === 0) throw new EncryptionConfigError(`${at}.resources: Required value: at least one ${at}.resources is required`);
  const resources = names.map((n, j) => checkResourceName(n, `${at}.resources[${j}]`, seen));
  const providers = entry.providers;
  if (!Array.isArray(providers) || providers.length === 0) throw new EncryptionConfigError(`${at}.providers: Required value: at least one ${at}.providers is required`);
  const parsed = providers.map((p, j) => parseProvider(p, `${at}.providers[${j}]`));
  return { resources, transformers: new PrefixTransformers(parsed.flatMap((p) => p.transformers)), writes: parsed[0]!.type };
}

function checkResourceName(value: unknown, at: string, seen: Set<string>): string {
  if (typeof value !== "string" || value === "") throw new EncryptionConfigError(`${at}: Required value: resource name must not be empty`);
  if (value !== value.toLowerCase()) throw new EncryptionConfigError(`${at}: Invalid value: ${JSON.stringify(value)}: resource name must be lowercase`);
  if (value === "*") throw new EncryptionConfigError(`${at}: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`);
  if (value.startsWith("*") && !value.startsWith("*.")) throw new EncryptionConfigError(`${at}: Invalid value: ${JSON.stringify(value)}: use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`);
  if (seen.has(value)) throw new EncryptionConfigError(`${at}: Duplicate value: ${JSON.stringify(value)}`);
  // An entry an earlier wildcard already covers would never apply: upstream refuses it.
  const masked = [...seen.keys()].find((earlier) => earlier === "*.*" || (earlier.startsWith("*.") && value !== "*.*" && groupOf(earlier) === groupOf(value)));
  if (masked !== undefined) throw new EncryptionConfigError(`${at}: Invalid value: ${JSON.stringify(value)}: resource ${JSON.stringify(value)} is masked by earlier rule ${JSON.stringify(masked)}`);
  seen.add(value);
  return value;
}

function groupOf(name: string): string {
  const dot = name.indexOf(".");
  return dot < 0 ? "" : name.slice(dot + 1);
}

function parseProvider(value: unknown, at: string): { type: ProviderType; transformers: ValueTransformer[] } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new EncryptionConfigError(`${at}: Invalid value: must be an object`);
  const named = Object.keys(value).filter((k) => (PROVIDERS as readonly string[]).includes(k) || k === "kms");
  if (named.length === 0) {
    throw new EncryptionConfigError(`${at}: Invalid value: ${JSON.stringify(value)}: provider does not contain any of the expected providers: AESGCM, AESCBC, Secretbox, Identity`);
  }
  if (named.length > 1) throw new EncryptionConfigError(`${at}: Invalid value: more than one provider specified in a single element, should split into different list elements`);
  const type = named[0]!;
  if (type === "kms") throw new EncryptionConfigError(`${at}.kms: Unsupported value: KMS providers are not supported by this server`);
  if (type === "identity") return { type, transformers: [identityTransformer()] };
  const cfg = (value as Record<string, unknown>)[type] as Record<string, unknown> | null;
  const keys = cfg?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new EncryptionConfigError(`${at}.${type}.keys: Required value: at least one keys is required`);
  const names = new Set<string>();
  const transformers = keys.map((k, i) => {
    const kat = `${at}.${type}.keys[${i}]`;
    const key = (typeof k === "object" && k !== null ? k : {}) as { name?: unknown; secret?: unknown };
    if (typeof key.name !== "string" || key.name === "") throw new EncryptionConfigError(`${kat}.name: Required value: name is a mandatory field for a key`);
    if (names.has(key.name)) throw new EncryptionConfigError(`${kat}.name: Duplicate value: ${JSON.stringify(key.name)}`);
    names.add(key.name);
    if (typeof key.secret !== "string" || key.secret === "") throw new EncryptionConfigError(`${kat}.secret: Required value: secret is a mandatory field for a key`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(key.secret) || key.secret.length % 4 !== 0) throw new EncryptionConfigError(`${kat}.secret: Invalid value: "REDACTED": secrets must be base64 encoded`);
    const secret = Buffer.from(key.secret, "base64");
    const lengths = KEY_LENGTHS[type as keyof typeof KEY_LENGTHS];
    if (!lengths.includes(secret.length)) {
      throw new EncryptionConfigError(`${kat}.secret: Invalid value: "REDACTED": secret is not of the expected length, got ${secret.length}, expected one of [${lengths.join(" ")}]`);
    }
    return keyTransformer(type as keyof typeof KEY_LENGTHS, key.name, secret);
  });
  return { type: type as ProviderType, transformers };
}
