// The audit policy (upstream's audit.k8s.io/v1 Policy, `--audit-policy-file`):
// which requests are recorded and how much of each. Rules are tried in
// order; the first that matches decides the level (None, Metadata, Request,
// RequestResponse), and a request no rule matches is not recorded. A rule
// matches when every selector it has matches (upstream's policy checker):
//   users, userGroups (any of the user's groups), verbs;
//   resources ({group, resources, resourceNames}: "pods", "pods/log",
//   "*", "*/status", "pods/*") and namespaces ("" = cluster-scoped): resource
//   requests only; nonResourceURLs ("/healthz", "/api*"): other requests only.
// Parsing is strict: a malformed policy stops the server's start with the
// field that is wrong, as upstream refuses one.

import { readFileSync } from "node:fs";
import { parseJsonBody, parseYamlBody } from "../../machinery/decode/index.js";

export const LEVELS = ["None", "Metadata", "Request", "RequestResponse"] as const;
export type Level = (typeof LEVELS)[number];
export const STAGES = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"] as const;
export type Stage = (typeof STAGES)[number];

export interface GroupResources {
  readonly group: string;
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

export interface PolicyRule {
  readonly level: Level;
  readonly users: readonly string[];
  readonly userGroups: readonly string[];
  readonly verbs: readonly string[];
  readonly resources: readonly GroupResources[];
  readonly namespaces: readonly string[];
  readonly nonResourceURLs: readonly string[];
  /** Undefined: the policy's. */
  readonly omitStages: readonly Stage[] | undefined;
  readonly omitManagedFields: boolean | undefined;
}

export interface Policy {
  readonly rules: readonly PolicyRule[];
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean;
}

/** What a request is recorded with: its level, the stages left out, whether managedFields are dropped from bodies. */
export interface AuditDecision {
  readonly level: Level;
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean;
}

/** The parts of a user and of the request attributes a rule reads (filters/context.ts's UserInfo and RequestAttributes fit). */
export interface PolicyUser {
  readonly name: string;
  readonly groups: readonly string[];
}
export interface PolicyAttributes {
  readonly resourceRequest: boolean;
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly path: string;
}

export class AuditPolicyError extends Error {}

/** Reads and checks `--audit-policy-file`; throws AuditPolicyError naming the file and what is wrong. */
export function loadPolicy(file: string, auditGroups: readonly string[]): Policy {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new AuditPolicyError(`audit policy file ${file}: ${(err as Error).message}`);
  }
  try {
    return parsePolicy(text, auditGroups);
  } catch (err) {
    throw new AuditPolicyError(`audit policy file ${file}: ${(err as Error).message}`);
  }
}

/** A policy from its YAML or JSON text; `auditGroups` are the accepted groups of its apiVersion (audit.k8s.io, and the naming table's). */
export function parsePolicy(text: string, auditGroups: readonly string[]): Policy {
  let value: unknown;
  try {
    value = text.trimStart().startsWith("{") ? parseJsonBody(text).value : parseYamlBody(text).value;
  } catch (err) {
    throw new AuditPolicyError(`not valid YAML or JSON: ${(err as Error).message}`);
  }
  const doc = object(value, "policy");
  known(doc, "", ["apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"]);
  const versions = auditGroups.map((g) => `${g}/v1`);
  if (!versions.includes(doc.apiVersion as string)) {
    throw new AuditPolicyError(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? "")}: supported values: ${versions.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  if (doc.kind !== "Policy") throw new AuditPolicyError(`kind: Unsupported value: ${JSON.stringify(doc.kind ?? "")}: supported values: "Policy"`);
  const rulesValue = doc.rules ?? [];
  if (!Array.isArray(rulesValue)) throw new AuditPolicyError("rules: Invalid value: must be a list");
  // Upstream refuses a policy that records nothing by accident.
  if (rulesValue.length === 0) throw new AuditPolicyError("loaded illegal policy with 0 rules");
  return {
    rules: rulesValue.map((r, i) => parseRule(r, `rules[${i}]`)),
    omitStages: stages(doc.omitStages, "omitStages") ?? [],
    omitManagedFields: bool(doc.omitManagedFields, "omitManagedFields") ?? false,
  };
}

function parseRule(value: unknown, at: string): PolicyRule {
  const r = object(value, at);
  known(r, at, ["level", "users", "userGroups", "verbs", "resources", "namespaces", "nonResourceURLs", "omitStages", "omitManagedFields"]);
  if (r.level === undefined || r.level === "") throw new AuditPolicyError(`${at}.level: Required value`);
  if (!(LEVELS as readonly unknown[]).includes(r.level)) {
    throw new AuditPolicyError(`${at}.level: Unsupported value: ${JSON.stringify(r.level)}: supported values: ${LEVELS.map((l) => JSON.stringify(l)).join(", ")}`);
  }
  const resources = list(r.resources, `${at}.resources`, (v, p) => {
    const g = object(v, p);
    known(g, p, ["group", "resources", "resourceNames"]);
    if (g.group !== undefined && typeof g.group !== "string") throw new AuditPolicyError(`${p}.group: Invalid value: must be a string`);
    const res = strings(g.resources, `${p}.resources`);
    res.forEach((name, j) => checkResource(name, `${p}.resources[${j}]`));
    const names = strings(g.resourceNames, `${p}.resourceNames`);
    if (names.length > 0 && res.length === 0) throw new AuditPolicyError(`${p}.resourceNames: Invalid value: using resourceNames requires at least one resource`);
    return { group: (g.group as string | undefined) ?? "", resources: res, resourceNames: names };
  });
  const namespaces = strings(r.namespaces, `${at}.namespaces`);
  const nonResourceURLs = strings(r.nonResourceURLs, `${at}.nonResourceURLs`);
  nonResourceURLs.forEach((u, j) => {
    const p = `${at}.nonResourceURLs[${j}]`;
    if (u !== "*" && !u.startsWith("/")) throw new AuditPolicyError(`${p}: Invalid value: ${JSON.stringify(u)}: non-resource URL rules must begin with a '/' character`);
    if (u.slice(0, -1).includes("*")) throw new AuditPolicyError(`${p}: Invalid value: ${JSON.stringify(u)}: non-resource URL wildcards ('*') must be the final character of the rule`);
  });
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    throw new AuditPolicyError(`${at}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  return {
    level: r.level as Level,
    users: strings(r.users, `${at}.users`),
    userGroups: strings(r.userGroups, `${at}.userGroups`),
    verbs: strings(r.verbs, `${at}.verbs`),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stages(r.omitStages, `${at}.omitStages`),
    omitManagedFields: bool(r.omitManagedFields, `${at}.omitManagedFields`),
  };
}

// "pods", "pods/log", "*", "*/status", "pods/*"; no other use of "*" and at most one "/".
function checkResource(name: string, at: string): void {
  const parts = name.split("/");
  const ok = name !== "" && parts.length <= 2 && parts.every((p) => p !== "" && (p === "*" || !p.includes("*")));
  if (!ok) throw new AuditPolicyError(`${at}: Invalid value: ${JSON.stringify(name)}: must be a resource, resource/subresource, "*", "*/subresource" or "resource/*"`);
}

function object(v: unknown, at: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new AuditPolicyError(`${at}: Invalid value: must be an object`);
  return v as Record<string, unknown>;
}

function known(o: Record<string, unknown>, at: string, fields: readonly string[]): void {
  for (const k of Object.keys(o)) if (!fields.includes(k)) throw new AuditPolicyError(`strict decoding error: unknown field "${at === "" ? k : `${at}.${k}`}"`);
}

function list<T>(v: unknown, at: string, item: (v: unknown, at: string) => T): T[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new AuditPolicyError(`${at}: Invalid value: must be a list`);
  return v.map((x, i) => item(x, `${at}[${i}]`));
}

function strings(v: unknown, at: string): string[] {
  return list(v, at, (x, p) => {
    if (typeof x !== "string") throw new AuditPolicyError(`${p}: Invalid value: must be a string`);
    return x;
  });
}

function stages(v: unknown, at: string): Stage[] | undefined {
  if (v === undefined || v === null) return undefined;
  return strings(v, at).map((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) {
      throw new AuditPolicyError(`${at}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${STAGES.map((x) => JSON.stringify(x)).join(", ")}`);
    }
    return s as Stage;
  });
}

function bool(v: unknown, at: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw new AuditPolicyError(`${at}: Invalid value: must be true or false`);
  return v;
}

const NONE: AuditDecision = Object.freeze({ level: "None", omitStages: [], omitManagedFields: false });

/** The first matching rule's level (with its stages and managedFields choice), or None. */
export function evaluatePolicy(policy: Policy, user: PolicyUser, attrs: PolicyAttributes): AuditDecision {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, user, attrs)) continue;
    return {
      level: rule.level,
      omitStages: rule.omitStages ?? policy.omitStages,
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return NONE;
}

export function ruleMatches(rule: PolicyRule, user: PolicyUser, attrs: PolicyAttributes): boolean {
  if (rule.users.length > 0 && !rule.users.includes(user.name)) return false;
  if (rule.userGroups.length > 0 && !user.groups.some((g) => rule.userGroups.includes(g))) return false;
  if (rule.verbs.length > 0 && !rule.verbs.includes(attrs.verb)) return false;
  if (rule.namespaces.length > 0 || rule.resources.length > 0) return resourceMatches(rule, attrs);
  if (rule.nonResourceURLs.length > 0) return nonResourceMatches(rule, attrs);
  return true;
}

function resourceMatches(rule: PolicyRule, a: PolicyAttributes): boolean {
  if (!a.resourceRequest) return false;
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(a.namespace)) return false;
  if (rule.resources.length === 0) return true;
  const combined = a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`;
  for (const gr of rule.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === "*") return true;
      if (a.subresource !== "" && res.startsWith("*/") && res.slice(2) === a.subresource) return true;
      if (res.endsWith("/*") && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

function nonResourceMatches(rule: PolicyRule, a: PolicyAttributes): boolean {
  if (a.resourceRequest) return false;
  return rule.nonResourceURLs.some((u) => u === "*" || u === a.path || (u.endsWith("*") && a.path.startsWith(u.slice(0, -1))));
}
