// The rules a user holds, as lists rather than decisions: what an authorizer
// can enumerate (upstream's RuleResolver: RBAC lists its bindings' rules,
// AlwaysAllow everything, any other authorizer leaves the list incomplete),
// and whether one list of rules covers another (upstream's Covers, which the
// escalation check of escalation.ts asks). SelfSubjectRulesReview
// (reviews.ts) and escalation prevention both read these.

import type { PolicyRule } from "../../api/rbac/index.js";
import { goQuote } from "../../machinery/index.js";
import { alwaysAllow, type Authorizer, type UserInfo } from "../filters/index.js";

/** What an authorizer can tell of a user's rights. */
export interface ResolvedRules {
  readonly rules: readonly PolicyRule[];
  /** Why some rules may be missing (a binding to a role that does not exist). */
  readonly errors: readonly string[];
  /** True when the authorizer cannot list everything it would allow. */
  readonly incomplete: boolean;
}

/**
 * An authorizer that can list the rules it applies (upstream's RuleResolver).
 * An authorizer without `rulesFor` makes every SelfSubjectRulesReview
 * `incomplete`; upstream's Node authorizer answers incomplete only for node
 * users (nothing, complete, for everyone else), and so should ours.
 */
export interface RuleResolver {
  rulesFor(user: UserInfo, namespace: string): Promise<ResolvedRules>;
}

/** Upstream's aggregate error text: one message alone, several as `[a, b]`. */
export function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
}

/** Every verb on every resource and URL: what AlwaysAllow grants, and what an aggregationRule needs. */
export const FULL_AUTHORITY: readonly PolicyRule[] = Object.freeze([
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] },
]);

const EVERYTHING: ResolvedRules = Object.freeze({ rules: FULL_AUTHORITY, errors: [], incomplete: false });
const UNKNOWN: ResolvedRules = Object.freeze({ rules: [], errors: [], incomplete: true });

/** The rules one authorizer applies to `user` in `namespace`: its own list, everything (AlwaysAllow), or none and incomplete. */
export function rulesOf(authorizer: Authorizer, user: UserInfo, namespace: string): Promise<ResolvedRules> | ResolvedRules {
  if (authorizer === alwaysAllow) return EVERYTHING;
  const resolver = authorizer as Partial<RuleResolver>;
  return typeof resolver.rulesFor === "function" ? resolver.rulesFor.call(authorizer, user, namespace) : UNKNOWN;
}

/** Upstream's union RulesFor: every authorizer's rules, incomplete if one is, errors gathered. */
export async function resolveRules(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): Promise<ResolvedRules> {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  let incomplete = false;
  for (const a of authorizers) {
    const r = await rulesOf(a, user, namespace);
    rules.push(...r.rules);
    errors.push(...r.errors);
    incomplete ||= r.incomplete;
  }
  return { rules, errors, incomplete };
}

/**
 * The parts of `wanted` that no rule of `held` covers, each as one verb on
 * one group/resource (or URL), and one name when the rule names some
 * (upstream's BreakdownRule and ruleCovers). Empty when `held` covers all.
 */
export function uncovered(held: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  return wanted.flatMap(breakdown).filter((sub) => !held.some((owner) => covers(owner, sub)));
}

function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = rule.verbs ?? [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of names) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

// Whether `owner` covers the broken-down rule `sub`: `*` or every value, `*/<sub>` for subresources, names, URL prefixes.
function covers(owner: PolicyRule, sub: PolicyRule): boolean {
  const all = (set: readonly string[] | undefined, values: readonly string[] | undefined) =>
    (set ?? []).includes("*") || (values ?? []).every((v) => (set ?? []).includes(v));
  const resources = (owner.resources ?? []).includes("*") || (sub.resources ?? []).every((path) => {
    if ((owner.resources ?? []).includes(path)) return true;
    const slash = path.indexOf("/");
    return slash >= 0 && (owner.resources ?? []).includes(`*/${path.slice(slash + 1)}`);
  });
  const urls = (sub.nonResourceURLs ?? []).every((path) =>
    (owner.nonResourceURLs ?? []).some((o) => o === path || (o.endsWith("*") && path.startsWith(o.replace(/\*+$/, "")))));
  const ownerNames = owner.resourceNames ?? [];
  const names = (sub.resourceNames ?? []).length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || all(ownerNames, sub.resourceNames);
  return all(owner.verbs, sub.verbs) && all(owner.apiGroups, sub.apiGroups) && resources && names && urls;
}

/**
 * The missing rules as upstream prints them: simple rules (one group, one
 * resource, at most one name) that differ only by verb merged into one
 * (CompactRules), each in upstream's compact form, sorted, one per line.
 */
export function describeRules(rules: readonly PolicyRule[]): string {
  const merged = new Map<string, PolicyRule>();
  const rest: PolicyRule[] = [];
  for (const r of rules) {
    const simple = (r.apiGroups ?? []).length === 1 && (r.resources ?? []).length === 1 && (r.resourceNames ?? []).length <= 1 && (r.nonResourceURLs ?? []).length === 0;
    if (!simple) {
      rest.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? null]);
    const existing = merged.get(key);
    if (existing === undefined) merged.set(key, { ...r, verbs: [...(r.verbs ?? [])] });
    else existing.verbs!.push(...(r.verbs ?? []));
  }
  return [...new Set([...rest, ...merged.values()].map(compactString))].sort().join("\n");
}

/** Upstream's CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`. */
function compactString(r: PolicyRule): string {
  const list = (values: readonly string[]) => `[${values.map(goQuote).join(" ")}]`;
  const parts: string[] = [];
  const add = (label: string, values: readonly string[] | undefined) => {
    if ((values ?? []).length > 0) parts.push(`${label}:${list(values!)}`);
  };
  add("APIGroups", r.apiGroups);
  add("Resources", r.resources);
  add("NonResourceURLs", r.nonResourceURLs);
  add("ResourceNames", r.resourceNames);
  add("Verbs", r.verbs);
  return `{${parts.join(", ")}}`;
}
