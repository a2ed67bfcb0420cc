// --admission-control-config-file: upstream's AdmissionConfiguration
// (apiserver.config.k8s.io/v1, or the profile's group) whose PodSecurity
// plugin entry carries a PodSecurityConfiguration (inline `configuration`, or
// a `path` to its file): the cluster's default levels and versions, and the
// exemptions (usernames, runtimeClasses, namespaces). Without one, every
// mode defaults to privileged:latest (upstream's default: nothing enforced).

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseJsonBody, parseYamlBody } from "../../../machinery/decode/index.js";
import { LATEST_MINOR, LEVELS, MODES, parseLevel, parseVersion, type LevelVersion, type Policy } from "./levels.js";

export class AdmissionConfigError extends Error {}

export interface PodSecurityConfig {
  readonly defaults: Policy;
  readonly exemptions: { readonly usernames: ReadonlySet<string>; readonly runtimeClasses: ReadonlySet<string>; readonly namespaces: ReadonlySet<string> };
}

const PRIVILEGED: LevelVersion = { level: "privileged", minor: LATEST_MINOR, latest: true };

export const DEFAULT_POD_SECURITY: PodSecurityConfig = {
  defaults: { enforce: PRIVILEGED, audit: PRIVILEGED, warn: PRIVILEGED },
  exemptions: { usernames: new Set(), runtimeClasses: new Set(), namespaces: new Set() },
};

function parseText(text: string): unknown {
  try {
    return text.trimStart().startsWith("{") ? parseJsonBody(text).value : parseYamlBody(text).value;
  } catch (err) {
    throw new AdmissionConfigError(`not valid YAML or JSON: ${(err as Error).message}`);
  }
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new AdmissionConfigError(`${at}: Invalid value: must be an object`);
  return value as Record<string, unknown>;
}

function apiVersion(doc: Record<string, unknown>, groups: readonly string[], versions: readonly string[], kind: string, at: string): void {
  const supported = groups.flatMap((g) => versions.map((v) => `${g}/${v}`));
  if (!supported.includes(doc.apiVersion as string)) {
    throw new AdmissionConfigError(`${at}apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? "")}: supported values: ${supported.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  if (doc.kind !== kind) throw new AdmissionConfigError(`${at}kind: Unsupported value: ${JSON.stringify(doc.kind ?? "")}: supported values: ${JSON.stringify(kind)}`);
}

/** The PodSecurity plugin's configuration from an AdmissionConfiguration file (the default when the file has no PodSecurity entry). */
export function loadAdmissionConfig(file: string, groupSuffix: string): PodSecurityConfig {
  try {
    return parseAdmissionConfig(readFileSync(file, "utf8"), groupSuffix, (path) => readFileSync(resolve(dirname(file), path), "utf8"));
  } catch (err) {
    throw new AdmissionConfigError(`admission control config file ${file}: ${(err as Error).message}`);
  }
}

export function parseAdmissionConfig(text: string, groupSuffix: string, readPath: (path: string) => string = () => {
  throw new AdmissionConfigError("plugin configuration paths are not readable here");
}): PodSecurityConfig {
  const doc = object(parseText(text), "AdmissionConfiguration");
  apiVersion(doc, [...new Set(["apiserver.config.k8s.io", `apiserver.config.${groupSuffix}`])], ["v1", "v1alpha1"], "AdmissionConfiguration", "");
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw new AdmissionConfigError("plugins: Invalid value: must be a list");
  for (const [i, p] of plugins.entries()) {
    const plugin = object(p, `plugins[${i}]`);
    if (typeof plugin.name !== "string" || plugin.name === "") throw new AdmissionConfigError(`plugins[${i}].name: Required value`);
    if (plugin.name !== "PodSecurity") continue;
    const configuration = plugin.configuration ?? (typeof plugin.path === "string" && plugin.path !== "" ? parseText(readPath(plugin.path)) : undefined);
    if (configuration === undefined) return DEFAULT_POD_SECURITY;
    return parsePodSecurityConfiguration(object(configuration, `plugins[${i}].configuration`), groupSuffix);
  }
  return DEFAULT_POD_SECURITY;
}

function parsePodSecurityConfiguration(doc: Record<string, unknown>, groupSuffix: string): PodSecurityConfig {
  apiVersion(doc, [...new Set(["pod-security.admission.config.k8s.io", `pod-security.admission.config.${groupSuffix}`])], ["v1", "v1beta1", "v1alpha1"], "PodSecurityConfiguration", "PodSecurityConfiguration.");
  const d = doc.defaults === undefined ? {} : object(doc.defaults, "defaults");
  const lv = (mode: (typeof MODES)[number]): LevelVersion => {
    const levelValue = d[mode] ?? "privileged";
    const level = typeof levelValue === "string" ? parseLevel(levelValue) : undefined;
    if (level === undefined) throw new AdmissionConfigError(`defaults.${mode}: Invalid value: ${JSON.stringify(levelValue)}: must be one of ${LEVELS.join(", ")}`);
    const versionValue = d[`${mode}-version`] ?? "latest";
    const version = typeof versionValue === "string" ? parseVersion(versionValue) : undefined;
    if (version === undefined) throw new AdmissionConfigError(`defaults.${mode}-version: Invalid value: ${JSON.stringify(versionValue)}: must be "latest" or "v1.x"`);
    return { level, ...version };
  };
  const e = doc.exemptions === undefined ? {} : object(doc.exemptions, "exemptions");
  const list = (key: string): Set<string> => {
    const v = e[key] ?? [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || x === "")) throw new AdmissionConfigError(`exemptions.${key}: Invalid value: must be a list of non-empty strings`);
    return new Set(v as string[]);
  };
  return {
    defaults: { enforce: lv("enforce"), audit: lv("audit"), warn: lv("warn") },
    exemptions: { usernames: list("usernames"), runtimeClasses: list("runtimeClasses"), namespaces: list("namespaces") },
  };
}
