// TypeScript view of the admissionregistration kinds; fields optional, as request bodies are untrusted.

import type { ApiObject, LabelSelector } from "../../machinery/index.js";

export interface ServiceReference {
  namespace?: string;
  name?: string;
  path?: string;
  port?: number;
}

export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** Base64 PEM bundle. */
  caBundle?: string;
}

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface MatchCondition {
  name?: string;
  expression?: string;
}

export interface Webhook {
  name?: string;
  clientConfig?: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  /** Mutating webhooks only. */
  reinvocationPolicy?: string;
  matchConditions?: MatchCondition[];
}

export interface WebhookConfiguration extends ApiObject {
  webhooks?: Webhook[];
}

export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  matchPolicy?: string;
}

export interface PolicyValidation {
  expression?: string;
  message?: string;
  reason?: string;
  messageExpression?: string;
}

export interface ValidatingAdmissionPolicy extends ApiObject {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string };
    matchConstraints?: MatchResources;
    validations?: PolicyValidation[];
    failurePolicy?: string;
    auditAnnotations?: { key?: string; valueExpression?: string }[];
    matchConditions?: MatchCondition[];
    variables?: { name?: string; expression?: string }[];
  };
  status?: Record<string, unknown>;
}

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelector;
  parameterNotFoundAction?: string;
}

export interface ValidatingAdmissionPolicyBinding extends ApiObject {
  spec?: {
    policyName?: string;
    paramRef?: ParamRef;
    matchResources?: MatchResources;
    validationActions?: string[];
  };
}
