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
  listOf(V1, "MutatingWebhookConfiguration", "A list of MutatingWebhookConfigurations."),
  listOf(V1, "ValidatingWebhookConfiguration", "A list of ValidatingWebhookConfigurations."),
];
