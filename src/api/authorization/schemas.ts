// The authorization.<suffix>/v1 review kinds as schema data (definition
// names keep upstream's `io.k8s.api.authorization.v1`): kubectl posts its
// reviews as Protobuf, so the field numbers are those of
// k8s.io/api/authorization/v1/generated.proto. Never stored; read for
// request bodies and published in OpenAPI.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../apps/schemas.js";

export const AUTHORIZATION_V1 = "io.k8s.api.authorization.v1";

const strings = (tag: number, description: string) => f(tag, s.array(s.string(), { listType: "atomic" }), description);
const str = (tag: number, description: string) => f(tag, s.string(), description);
const ref = (name: string) => s.ref(`${AUTHORIZATION_V1}.${name}`);
const review = (kind: string, spec: string, status: string, description: string) =>
  type(`${AUTHORIZATION_V1}.${kind}`, description, {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata."),
    spec: f(2, ref(spec), "The question.", { required: true }),
    status: f(3, ref(status), "The server's answer."),
  });

export const AUTHORIZATION_TYPES: readonly TypeDef[] = [
  type(`${AUTHORIZATION_V1}.ResourceAttributes`, "A request on a resource, as the authorizer sees it.", {
    namespace: str(1, "The namespace (\"\" for cluster-scoped resources, or all namespaces for namespaced ones)."),
    verb: str(2, "get, list, watch, create, update, patch, delete, deletecollection, or a custom verb; '*' is every verb."),
    group: str(3, "The API group; '*' is every group."),
    version: str(4, "The API version; '*' is every version."),
    resource: str(5, "The resource; '*' is every resource."),
    subresource: str(6, "The subresource (\"\" for none)."),
    name: str(7, "The object's name (\"\" for every object)."),
  }),
  type(`${AUTHORIZATION_V1}.NonResourceAttributes`, "A request on a non-resource URL.", {
    path: str(1, "The URL path."),
    verb: str(2, "The HTTP verb in lower case."),
  }),
  type(`${AUTHORIZATION_V1}.SubjectAccessReviewSpec`, "Exactly one of resourceAttributes and nonResourceAttributes, and who asks.", {
    resourceAttributes: f(1, ref("ResourceAttributes"), "A request on a resource."),
    nonResourceAttributes: f(2, ref("NonResourceAttributes"), "A request on a non-resource URL."),
    user: str(3, "The user to check."),
    groups: strings(4, "The user's groups."),
    extra: f(5, s.map(s.any()), "Further facts about the user (lists of strings by key)."),
    uid: str(6, "The user's uid."),
  }),
  type(`${AUTHORIZATION_V1}.SelfSubjectAccessReviewSpec`, "Exactly one of resourceAttributes and nonResourceAttributes; the user is the caller.", {
    resourceAttributes: f(1, ref("ResourceAttributes"), "A request on a resource."),
    nonResourceAttributes: f(2, ref("NonResourceAttributes"), "A request on a non-resource URL."),
  }),
  type(`${AUTHORIZATION_V1}.SubjectAccessReviewStatus`, "Whether the request would be allowed.", {
    allowed: f(1, s.bool(), "True when allowed.", { required: true }),
    reason: str(2, "Why, when an authorizer gave one."),
    evaluationError: str(3, "An error met while deciding (the decision may still be right)."),
    denied: f(4, s.bool(), "True when an authorizer denied outright (no later authorizer could allow)."),
  }),
  type(`${AUTHORIZATION_V1}.SelfSubjectRulesReviewSpec`, "The namespace whose rules to list.", {
    namespace: str(1, "The namespace."),
  }),
  type(`${AUTHORIZATION_V1}.ResourceRule`, "What the caller may do to resources.", {
    verbs: strings(1, "The verbs; '*' is every verb."),
    apiGroups: strings(2, "The API groups; '*' is every group."),
    resources: strings(3, "The resources; '*' is every resource."),
    resourceNames: strings(4, "An allow-list of names; empty allows every name."),
  }),
  type(`${AUTHORIZATION_V1}.NonResourceRule`, "What the caller may do to non-resource URLs.", {
    verbs: strings(1, "The verbs; '*' is every verb."),
    nonResourceURLs: strings(2, "The URL paths; a trailing '*' matches a prefix."),
  }),
  type(`${AUTHORIZATION_V1}.SubjectRulesReviewStatus`, "The caller's rules; incomplete when an authorizer cannot list its own.", {
    resourceRules: f(1, s.array(ref("ResourceRule"), { listType: "atomic" }), "Rules on resources.", { required: true }),
    nonResourceRules: f(2, s.array(ref("NonResourceRule"), { listType: "atomic" }), "Rules on non-resource URLs.", { required: true }),
    incomplete: f(3, s.bool(), "True when the list may lack rules (an authorizer that cannot enumerate them).", { required: true }),
    evaluationError: str(4, "Errors met while listing (missing roles, ...)."),
  }),
  review("SubjectAccessReview", "SubjectAccessReviewSpec", "SubjectAccessReviewStatus", "May this user do this? (any user; needs create subjectaccessreviews)"),
  review("LocalSubjectAccessReview", "SubjectAccessReviewSpec", "SubjectAccessReviewStatus", "May this user do this in this namespace? (namespaced; needs create localsubjectaccessreviews there)"),
  review("SelfSubjectAccessReview", "SelfSubjectAccessReviewSpec", "SubjectAccessReviewStatus", "May I do this?"),
  review("SelfSubjectRulesReview", "SelfSubjectRulesReviewSpec", "SubjectRulesReviewStatus", "What may I do in this namespace?"),
];
