// Which webhooks a request is sent to (upstream's rules, namespaceSelector,
// objectSelector and matchConditions), without calling anything.

import { compileExpression, celValue } from "../../../api/apiextensions/cel.js";
import type { AdmissionAttributes } from "../../../api/admission.js";
import type { RuleWithOperations, Webhook } from "../../../api/admissionregistration/index.js";
import { selectorFromLabelSelector, type Labels } from "../../../machinery/index.js";

/** Whether one rule covers the request (operation, group, version, resource[/subresource], scope). */
export function ruleMatches(rule: RuleWithOperations, attrs: AdmissionAttributes, version: string): boolean {
  const ops = rule.operations ?? [];
  if (!ops.includes("*") && !ops.includes(attrs.operation)) return false;
  const groups = rule.apiGroups ?? [];
  if (!groups.includes("*") && !groups.includes(attrs.resource.group)) return false;
  const versions = rule.apiVersions ?? [];
  if (!versions.includes("*") && !versions.includes(version)) return false;
  if (!resourceMatches(rule.resources ?? [], attrs.resource.resource, attrs.subresource ?? "")) return false;
  const scope = rule.scope ?? "*";
  // Namespaces themselves are cluster-scoped, as upstream.
  const namespaced = attrs.namespace !== undefined && !(attrs.resource.group === "" && attrs.resource.resource === "namespaces");
  return scope === "*" || (scope === "Namespaced") === namespaced;
}

function resourceMatches(patterns: readonly string[], resource: string, subresource: string): boolean {
  return patterns.some((p) => {
    const [res, sub = ""] = p.split("/", 2) as [string, string?];
    if (res !== "*" && res !== resource) return false;
    return sub === "*" || sub === subresource;
  });
}

/**
 * namespaceSelector: a namespace object is matched by its own labels, a
 * cluster-scoped object always matches, others by their namespace's labels
 * (looked up only when the selector is not empty).
 */
export async function namespaceMatches(hook: Webhook, attrs: AdmissionAttributes, namespaceLabels: (name: string) => Promise<Labels | undefined>): Promise<boolean> {
  const selector = selectorFromLabelSelector(hook.namespaceSelector ?? {});
  if (selector.empty) return true;
  if (attrs.resource.group === "" && attrs.resource.resource === "namespaces") return selector.matches((attrs.object ?? attrs.oldObject)?.metadata.labels ?? {});
  if (attrs.namespace === undefined || attrs.namespace === "") return true;
  return selector.matches((await namespaceLabels(attrs.namespace)) ?? {});
}

/** objectSelector: the new object's or the old object's labels match. */
export function objectMatches(hook: Webhook, attrs: AdmissionAttributes): boolean {
  const selector = selectorFromLabelSelector(hook.objectSelector ?? {});
  if (selector.empty) return true;
  // Connect options have no metadata: they match as an object without labels.
  return [attrs.object, attrs.oldObject].some((o) => o !== undefined && selector.matches(o.metadata?.labels ?? {}));
}

type Program = (bindings: Record<string, unknown>) => unknown;
const programs = new Map<string, Program>();

/** A compiled CEL expression, cached by its text. */
export function program(expression: string): Program {
  let p = programs.get(expression);
  if (p === undefined) {
    p = compileExpression(expression);
    if (programs.size > 1000) programs.clear();
    programs.set(expression, p);
  }
  return p;
}

/**
 * matchConditions: every expression true → call; one false → skip; an error
 * (compile or evaluation) is returned for the failure policy to decide.
 */
export function conditionsMatch(hook: Webhook, bindings: () => Record<string, unknown>): { match: boolean; error?: string } {
  const conditions = hook.matchConditions ?? [];
  if (conditions.length === 0) return { match: true };
  const vars = Object.fromEntries(Object.entries(bindings()).map(([k, v]) => [k, celValue(v ?? null)]));
  let error: string | undefined;
  for (const c of conditions) {
    let result: unknown;
    try {
      result = program(c.expression ?? "")(vars);
    } catch (err) {
      result = err;
    }
    if (result === false) return { match: false };
    if (result !== true) error ??= `matchCondition ${JSON.stringify(c.name)} ${result instanceof Error ? `failed: ${result.message}` : "did not evaluate to a bool"}`;
  }
  return error === undefined ? { match: true } : { match: false, error };
}
