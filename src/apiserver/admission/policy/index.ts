// ValidatingAdmissionPolicy: a validating step (before the validating
// webhooks) that evaluates each binding's policy in CEL, in process. For
// every binding whose policy and matchResources cover the request: its
// parameters (paramKind + paramRef: one object by name or every object a
// selector matches), matchConditions, variables, then the validations; a
// failure acts per the binding's validationActions (Deny refuses with
// upstream's text, Warn adds a Warning header, Audit an audit annotation);
// an evaluation error acts per the policy's failurePolicy. Policies and
// bindings come from the watch caches.

import type { AdmissionAttributes, ValidatingPlugin } from "../../../api/admission.js";
import type { MatchResources, NamedRuleWithOperations, ParamRef, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, Webhook } from "../../../api/admissionregistration/index.js";
import { celValue } from "../../../api/apiextensions/cel.js";
import { ApiError, type ApiObject } from "../../../machinery/index.js";
import { conditionsMatch, namespaceMatches, objectMatches, program, ruleMatches } from "../webhooks/matching.js";
import { reviewRequest } from "../webhooks/review.js";

export interface PolicySources {
  policies(): Promise<readonly ValidatingAdmissionPolicy[]>;
  bindings(): Promise<readonly ValidatingAdmissionPolicyBinding[]>;
  namespace(name: string): Promise<ApiObject | undefined>;
  /** The parameter objects a paramRef selects, or an error text when the kind is not served. */
  params(apiVersion: string, kind: string, namespace: string | undefined, ref: ParamRef): Promise<ApiObject[] | string>;
  /** Whether the param kind is namespaced (undefined: not served). */
  paramNamespaced(apiVersion: string, kind: string): boolean | undefined;
  versionOf(group: string, resource: string): string;
  readonly exemptGroup: string;
}

const AUDIT_FAILURE_KEY = "validation.policy.admission.k8s.io/validation_failure";
const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

function matchesRules(rules: readonly NamedRuleWithOperations[] | undefined, attrs: AdmissionAttributes, version: string): boolean {
  return (rules ?? []).some((r) => ruleMatches(r, attrs, version) && ((r.resourceNames ?? []).length === 0 || r.resourceNames!.includes(attrs.name)));
}

async function matches(m: MatchResources | undefined, attrs: AdmissionAttributes, version: string, sources: PolicySources, required: boolean): Promise<boolean> {
  if (m === undefined || m === null) return !required;
  if ((required || (m.resourceRules ?? []).length > 0) && !matchesRules(m.resourceRules, attrs, version)) return false;
  if (matchesRules(m.excludeResourceRules, attrs, version)) return false;
  const selectors = m as unknown as Webhook;
  return objectMatches(selectors, attrs) && (await namespaceMatches(selectors, attrs, async (ns) => (await sources.namespace(ns))?.metadata.labels));
}

function run(expression: string, vars: Record<string, unknown>): { value?: unknown; error?: string } {
  let result: unknown;
  try {
    result = program(expression)(vars);
  } catch (err) {
    return { error: (err as Error).message };
  }
  if (result instanceof Error) return { error: result.message };
  return { value: result };
}

interface Outcome {
  readonly message: string;
  readonly reason: string;
  readonly index: number;
}

/** Evaluate one policy against one parameter (or none): the failures, and the audit annotations to add. */
function evaluate(policy: ValidatingAdmissionPolicy, attrs: AdmissionAttributes, version: string, params: ApiObject | null, namespaceObject: ApiObject | null): { failures: Outcome[]; annotations: [string, string][] } {
  const spec = policy.spec ?? {};
  const failOpen = spec.failurePolicy === "Ignore";
  const failures: Outcome[] = [];
  const raw = { object: attrs.object ?? null, oldObject: attrs.oldObject ?? null, request: reviewRequest(attrs, version).request, params, namespaceObject };
  const cond = conditionsMatch(spec as Webhook, () => raw);
  if (cond.error !== undefined) return { failures: failOpen ? [] : [{ message: cond.error, reason: "Invalid", index: -1 }], annotations: [] };
  if (!cond.match) return { failures: [], annotations: [] };
  const vars: Record<string, unknown> = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, celValue(v)]));
  const variables = new Map<string, unknown>();
  vars["variables"] = variables;
  for (const v of spec.variables ?? []) {
    const r = run(v.expression ?? "", vars);
    if (r.error === undefined && v.name) variables.set(v.name, r.value);
  }
  (spec.validations ?? []).forEach((v, index) => {
    const r = run(v.expression ?? "", vars);
    if (r.error !== undefined || typeof r.value !== "boolean") {
      if (!failOpen) failures.push({ message: `expression '${v.expression}' resulted in error: ${r.error ?? "result is not a bool"}`, reason: "Invalid", index });
      return;
    }
    if (r.value) return;
    let message = v.message || `failed expression: ${v.expression}`;
    if (v.messageExpression) {
      const m = run(v.messageExpression, vars);
      if (typeof m.value === "string" && m.value.trim() !== "" && !/[\r\n]/.test(m.value)) message = m.value;
    }
    failures.push({ message, reason: v.reason ?? "Invalid", index });
  });
  const annotations: [string, string][] = [];
  for (const a of spec.auditAnnotations ?? []) {
    const r = run(a.valueExpression ?? "", vars);
    if (r.error === undefined && r.value !== null && r.value !== undefined && a.key) annotations.push([`${policy.metadata.name}/${a.key}`, String(r.value)]);
  }
  return { failures, annotations };
}

export function validatingAdmissionPolicy(sources: PolicySources): ValidatingPlugin {
  return {
    name: "ValidatingAdmissionPolicy",
    handles: (attrs) => attrs.resource.group !== sources.exemptGroup,
    async validate(attrs) {
      const bindings = await sources.bindings();
      if (bindings.length === 0) return;
      const policies = new Map((await sources.policies()).map((p) => [p.metadata.name, p]));
      const version = attrs.version ?? sources.versionOf(attrs.resource.group, attrs.resource.resource);
      let namespaceObject: ApiObject | null | undefined;
      const auditFailures: unknown[] = [];
      for (const binding of [...bindings].sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))) {
        const policy = policies.get(binding.spec?.policyName ?? "");
        if (policy === undefined) continue;
        if (!(await matches(policy.spec?.matchConstraints, attrs, version, sources, true))) continue;
        if (!(await matches(binding.spec?.matchResources, attrs, version, sources, false))) continue;
        const actions = binding.spec?.validationActions ?? [];
        const prefix = `ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}'`;
        const deny = (message: string, reason: string) =>
          new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `${prefix} denied request: ${message}`, reason: reason as never, code: REASON_CODES[reason] ?? 422 });
        const failOpen = policy.spec?.failurePolicy === "Ignore";

        let paramList: (ApiObject | null)[] = [null];
        const kind = policy.spec?.paramKind;
        if (kind?.kind) {
          const ref = binding.spec?.paramRef;
          let problem: string | undefined;
          if (ref === undefined || ref === null) problem = "failed to configure binding: paramRef is required when paramKind is specified";
          else {
            const namespaced = sources.paramNamespaced(kind.apiVersion ?? "", kind.kind);
            const ns = namespaced ? (ref.namespace || attrs.namespace || undefined) : undefined;
            if (namespaced && ns === undefined) problem = "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources";
            else {
              const found = await sources.params(kind.apiVersion ?? "", kind.kind, ns, ref);
              if (typeof found === "string") problem = found;
              else if (found.length === 0) {
                if (ref.parameterNotFoundAction === "Deny") problem = "no params found for policy binding with `Deny` parameterNotFoundAction";
                else continue;
              } else paramList = found;
            }
          }
          if (problem !== undefined) {
            if (failOpen) continue;
            throw deny(problem, "Invalid");
          }
        }
        if (namespaceObject === undefined) namespaceObject = attrs.namespace ? ((await sources.namespace(attrs.namespace)) ?? null) : null;
        for (const params of paramList) {
          const { failures, annotations } = evaluate(policy, attrs, version, params, namespaceObject);
          for (const [k, v] of annotations) attrs.request?.annotate(k, v);
          for (const f of failures) {
            if (actions.includes("Deny")) throw deny(f.message, f.reason);
            if (actions.includes("Warn")) attrs.request?.warn(`Validation failed for ${prefix}: ${f.message}`);
            if (actions.includes("Audit")) auditFailures.push({ message: f.message, policy: policy.metadata.name, binding: binding.metadata.name, expressionIndex: f.index, validationActions: actions });
          }
        }
      }
      if (auditFailures.length > 0) attrs.request?.annotate(AUDIT_FAILURE_KEY, JSON.stringify(auditFailures));
    },
  };
}
