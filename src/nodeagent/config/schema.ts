// The NodeAgentConfiguration fields (nodeagent.config.orch.io/v1beta1) as a
// small schema: each field's kind drives both checking and drop-in merging
// (seed 001, "Configuration merging"), so the two can never disagree.

import { parseQuantity } from "../../api/core/quantity.js";
import { parseDuration } from "../../component/index.js";

export type FieldKind =
  | { kind: "string"; enum?: readonly string[] }
  | { kind: "int"; min?: number; max?: number }
  | { kind: "bool" }
  /** Go duration text ("5m0s"); the parsed config holds milliseconds. */
  | { kind: "duration"; minMs?: number }
  /** A resource quantity ("10Mi"), kept as written. */
  | { kind: "quantity" }
  | { kind: "list" }
  | { kind: "map"; values: "string" | "bool" | "list" }
  | { kind: "struct"; fields: Readonly<Record<string, FieldKind>> };

const str = (values?: readonly string[]): FieldKind => (values ? { kind: "string", enum: values } : { kind: "string" });
const int = (min?: number, max?: number): FieldKind => ({ kind: "int", ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) });
const bool: FieldKind = { kind: "bool" };
const duration: FieldKind = { kind: "duration" };

export const API_VERSION = "nodeagent.config.orch.io/v1beta1";
export const KIND = "NodeAgentConfiguration";

/** The fields a file may set (apiVersion and kind are checked separately). */
export const CONFIG_FIELDS: Readonly<Record<string, FieldKind>> = {
  staticPodPath: str(),
  staticPodURL: str(),
  staticPodURLHeader: { kind: "map", values: "list" },
  syncFrequency: duration,
  fileCheckFrequency: duration,
  address: str(),
  port: int(0, 65535),
  containerRuntimeEndpoint: str(),
  imageServiceEndpoint: str(),
  maxPods: int(0),
  podPidsLimit: int(-1),
  failSwapOn: bool,
  memorySwap: { kind: "struct", fields: { swapBehavior: str(["", "NoSwap", "LimitedSwap"]) } },
  nodeStatusUpdateFrequency: duration,
  nodeStatusReportFrequency: duration,
  nodeLeaseDurationSeconds: int(1),
  serializeImagePulls: bool,
  clusterDNS: { kind: "list" },
  clusterDomain: str(),
  resolvConf: str(),
  evictionHard: { kind: "map", values: "string" },
  featureGates: { kind: "map", values: "bool" },
  authentication: {
    kind: "struct",
    fields: {
      anonymous: { kind: "struct", fields: { enabled: bool } },
      webhook: { kind: "struct", fields: { enabled: bool, cacheTTL: duration } },
      x509: { kind: "struct", fields: { clientCAFile: str() } },
    },
  },
  containerLogMaxSize: { kind: "quantity" },
  containerLogMaxFiles: int(2),
  containerLogMonitorInterval: { kind: "duration", minMs: 3000 },
  authorization: {
    kind: "struct",
    fields: {
      mode: str(["AlwaysAllow", "Webhook"]),
      webhook: { kind: "struct", fields: { cacheAuthorizedTTL: duration, cacheUnauthorizedTTL: duration } },
    },
  },
};

export class ConfigError extends Error {
  readonly file: string;
  readonly field: string;
  constructor(options: { file: string; field: string; message: string }) {
    super(`${options.file}: ${options.field ? `field ${options.field}: ` : ""}${options.message}`);
    this.name = "ConfigError";
    this.file = options.file;
    this.field = options.field;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks `value` against `fields` and returns it converted (durations to milliseconds).
 * Throws a ConfigError naming the file and the field's path on the first problem.
 */
export function checkFields(value: Record<string, unknown>, fields: Readonly<Record<string, FieldKind>>, file: string, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    const path = prefix + name;
    const kind = fields[name];
    if (kind === undefined) throw new ConfigError({ file, field: path, message: "unknown field" });
    if (v === null) continue; // null means "not set", as in Go's JSON decoding
    out[name] = checkValue(v, kind, file, path);
  }
  return out;
}

function checkValue(v: unknown, kind: FieldKind, file: string, path: string): unknown {
  const bad = (message: string): never => {
    throw new ConfigError({ file, field: path, message });
  };
  switch (kind.kind) {
    case "string":
      if (typeof v !== "string") bad(`must be a string, got ${JSON.stringify(v)}`);
      if (kind.enum && !kind.enum.includes(v as string)) {
        bad(`unsupported value ${JSON.stringify(v)}: supported values: ${kind.enum.filter((e) => e).map((e) => JSON.stringify(e)).join(", ")}`);
      }
      return v;
    case "int":
      if (typeof v !== "number" || !Number.isInteger(v)) bad(`must be an integer, got ${JSON.stringify(v)}`);
      if (kind.min !== undefined && (v as number) < kind.min) bad(`must be at least ${kind.min}, got ${v}`);
      if (kind.max !== undefined && (v as number) > kind.max) bad(`must be at most ${kind.max}, got ${v}`);
      return v;
    case "bool":
      if (typeof v !== "boolean") bad(`must be true or false, got ${JSON.stringify(v)}`);
      return v;
    case "duration":
      if (typeof v !== "string") bad(`must be a duration such as "10s", got ${JSON.stringify(v)}`);
      try {
        const ms = parseDuration(v as string);
        if (ms < 0) bad(`must not be negative, got ${JSON.stringify(v)}`);
        if (kind.minMs !== undefined && ms < kind.minMs) bad(`must be at least ${kind.minMs / 1000}s, got ${JSON.stringify(v)}`);
        return ms;
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        return bad((err as Error).message);
      }
    case "quantity":
      if (typeof v !== "string" || parseQuantity(v) === undefined) bad(`must be a quantity such as "10Mi", got ${JSON.stringify(v)}`);
      return v;
    case "list":
      if (!Array.isArray(v) || v.some((e) => typeof e !== "string")) bad(`must be a list of strings, got ${JSON.stringify(v)}`);
      return [...(v as string[])];
    case "map": {
      if (!isObject(v)) bad(`must be a map, got ${JSON.stringify(v)}`);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v as Record<string, unknown>)) {
        const itemKind: FieldKind = kind.values === "list" ? { kind: "list" } : kind.values === "bool" ? bool : str();
        out[key] = checkValue(item, itemKind, file, `${path}[${JSON.stringify(key)}]`);
      }
      return out;
    }
    case "struct":
      if (!isObject(v)) bad(`must be an object, got ${JSON.stringify(v)}`);
      return checkFields(v as Record<string, unknown>, kind.fields, file, `${path}.`);
  }
}

/**
 * Merges a checked drop-in over `base` by the seed's five rules: scalars overridden, embedded structs
 * merged field by field, lists replaced, maps merged by key (a map of lists replaces the list under a key).
 */
export function mergeFields(base: Record<string, unknown>, over: Record<string, unknown>, fields: Readonly<Record<string, FieldKind>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [name, v] of Object.entries(over)) {
    const kind = fields[name]!;
    const old = out[name];
    if (kind.kind === "struct" && isObject(old)) out[name] = mergeFields(old, v as Record<string, unknown>, kind.fields);
    else if (kind.kind === "map" && isObject(old)) out[name] = { ...old, ...(v as Record<string, unknown>) };
    else out[name] = v;
  }
  return out;
}
