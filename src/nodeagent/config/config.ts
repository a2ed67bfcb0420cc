// Loading the agent's configuration: the --config file, then --config-dir
// drop-ins in lexical order, then flags, each merged over the last by the
// schema's rules (seed 001, "Configuration merging"). Durations are milliseconds.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { API_VERSION, CONFIG_FIELDS, ConfigError, KIND, checkFields, mergeFields } from "./schema.js";

export type SwapBehavior = "NoSwap" | "LimitedSwap";
export type AuthorizationMode = "AlwaysAllow" | "Webhook";

export interface NodeAgentConfig {
  staticPodPath: string;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  syncFrequency: number;
  fileCheckFrequency: number;
  address: string;
  port: number;
  /** "" runs the embedded runtime. */
  containerRuntimeEndpoint: string;
  /** "" uses containerRuntimeEndpoint. */
  imageServiceEndpoint: string;
  maxPods: number;
  podPidsLimit: number;
  failSwapOn: boolean;
  memorySwap: { swapBehavior: SwapBehavior | "" };
  nodeStatusUpdateFrequency: number;
  nodeStatusReportFrequency: number;
  nodeLeaseDurationSeconds: number;
  serializeImagePulls: boolean;
  clusterDNS: string[];
  clusterDomain: string;
  /** The resolver configuration pods with dnsPolicy Default get (and the others' extra search domains); "" for none. */
  resolvConf: string;
  /** Signal → threshold ("memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "5%"). */
  evictionHard: Record<string, string>;
  featureGates: Record<string, boolean>;
  authentication: {
    anonymous: { enabled: boolean };
    webhook: { enabled: boolean; cacheTTL: number };
    x509: { clientCAFile: string };
  };
  authorization: { mode: AuthorizationMode; webhook: { cacheAuthorizedTTL: number; cacheUnauthorizedTTL: number } };
  /** A container log file reaching this size (a quantity; negative: never) is rotated (logs/log-rotation.ts). */
  containerLogMaxSize: string;
  /** Log files kept per container instance, the current one included. */
  containerLogMaxFiles: number;
  /** How often the sizes are looked at (ms). */
  containerLogMonitorInterval: number;
}

/** Upstream's v1beta1 defaults, with the seed's paths. */
export function defaultConfig(): NodeAgentConfig {
  return {
    staticPodPath: "/etc/orch/manifests",
    staticPodURL: "",
    staticPodURLHeader: {},
    syncFrequency: 60_000,
    fileCheckFrequency: 20_000,
    address: "0.0.0.0",
    port: 10250,
    containerRuntimeEndpoint: "",
    imageServiceEndpoint: "",
    maxPods: 110,
    podPidsLimit: -1,
    failSwapOn: true,
    memorySwap: { swapBehavior: "NoSwap" },
    nodeStatusUpdateFrequency: 10_000,
    nodeStatusReportFrequency: 300_000,
    nodeLeaseDurationSeconds: 40,
    serializeImagePulls: true,
    clusterDNS: [],
    clusterDomain: "",
    resolvConf: "/etc/resolv.conf",
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%", "imagefs.available": "15%", "nodefs.inodesFree": "5%" },
    featureGates: {},
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true, cacheTTL: 120_000 }, x509: { clientCAFile: "" } },
    authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 30_000 } },
    containerLogMaxSize: "10Mi",
    containerLogMaxFiles: 5,
    containerLogMonitorInterval: 10_000,
  };
}

/** Drop-in files read from --config-dir (upstream reads `.conf`; YAML and JSON names are accepted too). */
const DROP_IN = /\.(conf|ya?ml|json)$/;

export interface LoadConfigOptions {
  /** --config */
  file?: string;
  /** --config-dir */
  dir?: string;
  /** Config fields set by flags, already in the parsed form (durations in ms); they win over every file. */
  flags?: Partial<Record<keyof NodeAgentConfig, unknown>>;
}

/** Reads, checks and merges the configuration; throws ConfigError naming the file and field. */
export function loadConfig(options: LoadConfigOptions = {}): NodeAgentConfig {
  let merged = defaultConfig() as unknown as Record<string, unknown>;
  const files: string[] = [];
  if (options.file) files.push(options.file);
  if (options.dir) files.push(...dropIns(options.dir));
  for (const file of files) merged = mergeFields(merged, readConfigFile(file), CONFIG_FIELDS);
  if (options.flags) merged = mergeFields(merged, definedOnly(options.flags), CONFIG_FIELDS);
  return merged as unknown as NodeAgentConfig;
}

function dropIns(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new ConfigError({ file: dir, field: "", message: `cannot read the drop-in directory: ${(err as Error).message}` });
  }
  // Lexical order by name, as upstream: 10-a.conf before 20-b.conf.
  return names
    .filter((n) => DROP_IN.test(n))
    .sort()
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).isFile());
}

/** Parses one file (YAML or JSON), checks apiVersion, kind and every field. */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError({ file, field: "", message: `cannot read: ${(err as Error).message}` });
  }
  return parseConfigText(text, file);
}

export function parseConfigText(text: string, file: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: true, prettyErrors: false });
  } catch (err) {
    throw new ConfigError({ file, field: "", message: `not valid YAML or JSON: ${(err as Error).message.split("\n")[0]}` });
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new ConfigError({ file, field: "", message: "must be an object" });
  const { apiVersion, kind, ...fields } = doc as Record<string, unknown>;
  if (kind !== KIND) throw new ConfigError({ file, field: "kind", message: `must be ${JSON.stringify(KIND)}, got ${JSON.stringify(kind ?? "")}` });
  if (apiVersion !== API_VERSION) {
    throw new ConfigError({ file, field: "apiVersion", message: `must be ${JSON.stringify(API_VERSION)}, got ${JSON.stringify(apiVersion ?? "")}` });
  }
  return checkFields(fields, CONFIG_FIELDS, file);
}

function definedOnly(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}
