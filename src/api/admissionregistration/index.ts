// The admissionregistration.<suffix> API group: the webhook configurations
// (v1) the API server's admission chain calls out to (apiserver/admission/webhooks).

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { ADMISSIONREGISTRATION_TYPES } from "./schemas.js";
import { validatingAdmissionPolicies, validatingAdmissionPolicyBindings } from "./policies.js";
import { mutatingWebhookConfigurations, validatingWebhookConfigurations } from "./webhook-configurations.js";

export { ADMISSIONREGISTRATION_TYPES, ADMISSIONREGISTRATION_V1 } from "./schemas.js";
export type { MatchCondition, MatchResources, NamedRuleWithOperations, ParamRef, PolicyValidation, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, RuleWithOperations, ServiceReference, Webhook, WebhookClientConfig, WebhookConfiguration } from "./types.js";

export const admissionregistrationModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...ADMISSIONREGISTRATION_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [mutatingWebhookConfigurations(naming), validatingWebhookConfigurations(naming), validatingAdmissionPolicies(naming), validatingAdmissionPolicyBindings(naming)];
  },
};

export default admissionregistrationModule;
