// The admissionregistration.<suffix>/v1 webhook configurations as schema data
// (definition names keep upstream's `io.k8s.api.admissionregistration.v1`).
// Protobuf field numbers from k8s.io/api/admissionregistration/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const ADMISSIONREGISTRATION_V1 = "io.k8s.api.admissionregistration.v1";
const V1 = ADMISSIONREGISTRATION_V1;

const strings = (tag: number, description: string, embeddedIn?: number) =>
  f(tag, s.array(s.string(), { listType: "atomic" }), description, embeddedIn === undefined ? {} : { embeddedIn });

/** Fields both webhook kinds share; the numbers that differ are passed in. */
function webhook(kind: string, description: string, tags: { objectSelector: number; matchConditions: number }, extra: Record<string, ReturnType<typeof f>> = {}): TypeDef {
  return type(`${V1}.${kind}`, description, {
    name: f(1, s.string(), "The webhook's fully qualified name (at least three dot-separated segments).", { required: true }),
    clientConfig: f(2, s.ref(`${V1}.WebhookClientConfig`), "How to reach the webhook.", { required: true }),
    rules: f(3, s.array(s.ref(`${V1}.RuleWithOperations`), { listType: "atomic" }), "The operations and resources the webhook cares about."),
    failurePolicy: f(4, s.string(), "What an unreachable or failing webhook means: Fail (the default) or Ignore."),
    matchPolicy: f(9, s.string(), "Equivalent (the default) or Exact."),
    namespaceSelector: f(5, s.ref(`${META_V1}.LabelSelector`), "Which namespaces' objects are sent, by the namespace's labels."),
    objectSelector: f(tags.objectSelector, s.ref(`${META_V1}.LabelSelector`), "Which objects are sent, by their labels."),
    sideEffects: f(6, s.string(), "Whether calling the webhook changes anything out of band: None or NoneOnDryRun.", { required: true }),
    timeoutSeconds: f(7, s.int32(), "How long to wait for the webhook (1 to 30 seconds, default 10)."),
    admissionReviewVersions: strings(8, "AdmissionReview versions the webhook accepts, in preference order."),
    matchConditions: f(tags.matchConditions, s.array(s.ref(`${V1}.MatchCondition`), { listType: "map", listMapKeys: ["name"] }), "CEL expressions that must all be true for the request to be sent.", { patchStrategy: "merge", patchMergeKey: "name" }),
    ...extra,
  });
}

const configuration = (kind: string, item: string, description: string) =>
  type(`${V1}.${kind}`, description, {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    webhooks: f(2, s.array(s.ref(`${V1}.${item}`)), "The webhooks and the resources and operations each one handles.", { patchStrategy: "merge", patchMergeKey: "name" }),
  });

export const ADMISSIONREGISTRATION_TYPES: readonly TypeDef[] = [
  type(`${V1}.ServiceReference`, "A Service in the cluster that serves a webhook.", {
    namespace: f(1, s.string(), "The service's namespace.", { required: true }),
    name: f(2, s.string(), "The service's name.", { required: true }),
    path: f(3, s.string(), "The URL path requests are sent to."),
    port: f(4, s.int32(), "The service port (default 443)."),
  }),
  type(`${V1}.WebhookClientConfig`, "How to reach a webhook: a URL or a Service, and the CA to trust.", {
    url: f(3, s.string(), "An https:// URL."),
    service: f(1, s.ref(`${V1}.ServiceReference`), "A Service in the cluster."),
    caBundle: f(2, s.string({ format: "byte" }), "PEM CA bundle that signs the webhook's serving certificate."),
  }),
  type(`${V1}.RuleWithOperations`, "Operations on resources a webhook is called for.", {
    operations: strings(1, "CREATE, UPDATE, DELETE, CONNECT or '*'."),
    apiGroups: strings(1, "API groups; '*' is every group.", 2),
    apiVersions: strings(2, "API versions; '*' is every version.", 2),
    resources: strings(3, "Resources ('pods', 'pods/status', '*', '*/scale').", 2),
    scope: f(4, s.string(), "Cluster, Namespaced or '*' (the default).", { embeddedIn: 2 }),
  }),
  type(`${V1}.MatchCondition`, "A CEL expression a request must satisfy to be sent to a webhook.", {
    name: f(1, s.string(), "Identifies the condition.", { required: true }),
    expression: f(2, s.string(), "CEL over object, oldObject, request and authorizer; must evaluate to a bool.", { required: true }),
  }),
  webhook("MutatingWebhook", "A webhook that may change the objects sent to it.", { objectSelector: 11, matchConditions: 12 }, {
    reinvocationPolicy: f(10, s.string(), "Never (the default) or IfNeeded: call again when a later webhook changed the object."),
  }),
  webhook("ValidatingWebhook", "A webhook that accepts or refuses the requests sent to it.", { objectSelector: 10, matchConditions: 11 }),
  configuration("MutatingWebhookConfiguration", "MutatingWebhook", "Webhooks called in the mutating phase of admission."),
  configuration("ValidatingWebhookConfiguration", "ValidatingWebhook", "Webhooks called in the validating phase of admission."),
  type(`${V1}.NamedRuleWithOperations`, "A rule with an optional list of object names (Protobuf: the rule's fields are written one level flatter than upstream's doubly embedded message).", {
    resourceNames: strings(1, "Object names the rule is limited to; empty is every name."),
    operations: strings(1, "CREATE, UPDATE, DELETE, CONNECT or '*'.", 2),
    apiGroups: strings(2, "API groups; '*' is every group.", 2),
    apiVersions: strings(3, "API versions; '*' is every version.", 2),
    resources: strings(4, "Resources ('pods', 'pods/status', '*').", 2),
    scope: f(5, s.string(), "Cluster, Namespaced or '*' (the default).", { embeddedIn: 2 }),
  }),
  type(`${V1}.MatchResources`, "Which requests a policy or binding applies to.", {
    namespaceSelector: f(1, s.ref(`${META_V1}.LabelSelector`), "Which namespaces' objects, by the namespace's labels."),
    objectSelector: f(2, s.ref(`${META_V1}.LabelSelector`), "Which objects, by their labels."),
    resourceRules: f(3, s.array(s.ref(`${V1}.NamedRuleWithOperations`), { listType: "atomic" }), "The operations and resources that match."),
    excludeResourceRules: f(4, s.array(s.ref(`${V1}.NamedRuleWithOperations`), { listType: "atomic" }), "The operations and resources that never match."),
    matchPolicy: f(7, s.string(), "Equivalent (the default) or Exact."),
  }),
  type(`${V1}.ParamKind`, "The kind of a policy's parameter objects.", {
    apiVersion: f(1, s.string(), "group/version of the parameter kind."),
    kind: f(2, s.string(), "The parameter kind."),
  }),
  type(`${V1}.Validation`, "One CEL check of a policy.", {
    expression: f(1, s.string(), "CEL over object, oldObject, request, params, namespaceObject and variables; true passes.", { required: true }),
    message: f(2, s.string(), "The message of a failure."),
    reason: f(3, s.string(), "Unauthorized, Forbidden, Invalid (the default) or RequestEntityTooLarge."),
    messageExpression: f(4, s.string(), "CEL giving the message of a failure."),
  }),
  type(`${V1}.AuditAnnotation`, "An audit annotation a policy adds.", {
    key: f(1, s.string(), "The key (prefixed with the policy's name).", { required: true }),
    valueExpression: f(2, s.string(), "CEL giving the value; null adds nothing.", { required: true }),
  }),
  type(`${V1}.Variable`, "A named CEL expression, available to later ones as variables.<name>.", {
    name: f(1, s.string(), "The variable's name.", { required: true }),
    expression: f(2, s.string(), "CEL giving its value.", { required: true }),
  }),
  type(`${V1}.ValidatingAdmissionPolicySpec`, "What a policy checks and on which requests.", {
    paramKind: f(1, s.ref(`${V1}.ParamKind`), "The kind of its parameters, when it has any."),
    matchConstraints: f(2, s.ref(`${V1}.MatchResources`), "Which requests the policy may apply to.", { required: true }),
    validations: f(3, s.array(s.ref(`${V1}.Validation`), { listType: "atomic" }), "The checks."),
    failurePolicy: f(4, s.string(), "Fail (the default) or Ignore: what an evaluation error means."),
    auditAnnotations: f(5, s.array(s.ref(`${V1}.AuditAnnotation`), { listType: "atomic" }), "Audit annotations to add."),
    matchConditions: f(6, s.array(s.ref(`${V1}.MatchCondition`), { listType: "map", listMapKeys: ["name"] }), "CEL conditions that must all be true.", { patchStrategy: "merge", patchMergeKey: "name" }),
    variables: f(7, s.array(s.ref(`${V1}.Variable`), { listType: "atomic" }), "Named expressions."),
  }),
  type(`${V1}.ValidatingAdmissionPolicy`, "CEL checks applied in admission, through bindings.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, s.ref(`${V1}.ValidatingAdmissionPolicySpec`), "The policy."),
    status: f(3, s.any(), "Not written by this server."),
  }),
  type(`${V1}.ParamRef`, "Which parameter objects a binding uses.", {
    name: f(1, s.string(), "One object by name."),
    namespace: f(2, s.string(), "Their namespace (default: the request's, for namespaced kinds)."),
    selector: f(3, s.ref(`${META_V1}.LabelSelector`), "Every object whose labels match."),
    parameterNotFoundAction: f(4, s.string(), "Allow or Deny when none is found."),
  }),
  type(`${V1}.ValidatingAdmissionPolicyBindingSpec`, "Which policy applies where, with which parameters and actions.", {
    policyName: f(1, s.string(), "The policy bound.", { required: true }),
    paramRef: f(2, s.ref(`${V1}.ParamRef`), "The parameters."),
    matchResources: f(3, s.ref(`${V1}.MatchResources`), "Further limits on the requests."),
    validationActions: f(4, s.array(s.string(), { listType: "set" }), "Deny, Warn and/or Audit.", { required: true }),
  }),
  type(`${V1}.ValidatingAdmissionPolicyBinding`, "Binds a ValidatingAdmissionPolicy to requests and parameters.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, s.ref(`${V1}.ValidatingAdmissionPolicyBindingSpec`), "The binding."),
  }),
  listOf(V1, "ValidatingAdmissionPolicy", "A list of ValidatingAdmissionPolicies."),
  listOf(V1, "ValidatingAdmissionPolicyBinding", "A list of ValidatingAdmissionPolicyBindings."),
  listOf(V1, "MutatingWebhookConfiguration", "A list of MutatingWebhookConfigurations."),
  listOf(V1, "ValidatingWebhookConfiguration", "A list of ValidatingWebhookConfigurations."),
];
