// The flowcontrol.apiserver.<suffix> types (v1, and v1beta3 with the same
// fields) as schema data; definition names keep upstream's
// `io.k8s.api.flowcontrol.<version>.*`. Protobuf field numbers from
// k8s.io/api/flowcontrol/v1/generated.proto (v1.33).

import { f, s, type, type Schema, type TypeDef } from "../../machinery/schema.js";
import { listOf } from "../core/index.js";
import { META_V1 } from "../meta/schemas.js";

export const FLOWCONTROL_V1 = "io.k8s.api.flowcontrol.v1";
export const FLOWCONTROL_V1BETA3 = "io.k8s.api.flowcontrol.v1beta3";

function flowcontrolTypes(pkg: string): TypeDef[] {
  const r = (name: string): Schema => s.ref(`${pkg}.${name}`);
  const atomic = (items: Schema): Schema => s.array(items, { listType: "atomic" });
  const set = (items: Schema): Schema => s.array(items, { listType: "set" });
  const conditionFields = {
    type: f(1, s.string(), "The condition's type."),
    status: f(2, s.string(), "True, False or Unknown."),
    lastTransitionTime: f(3, s.time(), "When the status last changed."),
    reason: f(4, s.string(), "The reason of the last change, in CamelCase."),
    message: f(5, s.string(), "A human-readable message about the last change."),
  };
  return [
    type(`${pkg}.FlowSchema`, "Which requests belong to which priority level, and how they are split into flows.", {
      metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
      spec: f(2, r("FlowSchemaSpec"), "The schema's rules."),
      status: f(3, r("FlowSchemaStatus"), "The schema's conditions."),
    }),
    type(`${pkg}.FlowSchemaSpec`, "The rules of a FlowSchema.", {
      priorityLevelConfiguration: f(1, r("PriorityLevelConfigurationReference"), "The priority level of matching requests.", { required: true }),
      matchingPrecedence: f(2, s.int32(), "The order among schemas (lowest first), 1..10000; default 1000."),
      distinguisherMethod: f(3, r("FlowDistinguisherMethod"), "How matching requests are split into flows: ByUser or ByNamespace; none: one flow."),
      rules: f(4, atomic(r("PolicyRulesWithSubjects")), "The schema matches a request that any rule matches."),
    }),
    type(`${pkg}.PriorityLevelConfigurationReference`, "A priority level by name.", {
      name: f(1, s.string(), "The priority level's name.", { required: true }),
    }),
    type(`${pkg}.FlowDistinguisherMethod`, "How requests are split into flows.", {
      type: f(1, s.string(), "ByUser or ByNamespace.", { required: true }),
    }),
    type(`${pkg}.PolicyRulesWithSubjects`, "Subjects and the requests of theirs a rule matches.", {
      subjects: f(1, atomic(r("Subject")), "Who: users, groups or service accounts.", { required: true }),
      resourceRules: f(2, atomic(r("ResourcePolicyRule")), "Resource requests matched."),
      nonResourceRules: f(3, atomic(r("NonResourcePolicyRule")), "Non-resource requests matched."),
    }),
    type(`${pkg}.Subject`, "A user, a group or a service account.", {
      kind: f(1, s.string(), "User, Group or ServiceAccount.", { required: true }),
      user: f(2, r("UserSubject"), "The user, for kind User."),
      group: f(3, r("GroupSubject"), "The group, for kind Group."),
      serviceAccount: f(4, r("ServiceAccountSubject"), "The service account, for kind ServiceAccount."),
    }),
    type(`${pkg}.UserSubject`, "A user by name.", { name: f(1, s.string(), "The user's name, or * for all.", { required: true }) }),
    type(`${pkg}.GroupSubject`, "A group by name.", { name: f(1, s.string(), "The group's name, or * for all.", { required: true }) }),
    type(`${pkg}.ServiceAccountSubject`, "A service account.", {
      namespace: f(1, s.string(), "The account's namespace.", { required: true }),
      name: f(2, s.string(), "The account's name, or * for all of the namespace.", { required: true }),
    }),
    type(`${pkg}.ResourcePolicyRule`, "Resource requests by verb, group, resource and namespace.", {
      verbs: f(1, set(s.string()), "Verbs, or *.", { required: true }),
      apiGroups: f(2, set(s.string()), "API groups, or *.", { required: true }),
      resources: f(3, set(s.string()), "Resources (and resource/subresource), or *.", { required: true }),
      clusterScope: f(4, s.bool(), "Whether cluster-scoped requests match."),
      namespaces: f(5, set(s.string()), "Namespaces, or *."),
    }),
    type(`${pkg}.NonResourcePolicyRule`, "Non-resource requests by verb and URL.", {
      verbs: f(1, set(s.string()), "Verbs, or *.", { required: true }),
      nonResourceURLs: f(6, set(s.string()), "URL paths (a trailing /* matches a prefix), or *.", { required: true }),
    }),
    type(`${pkg}.FlowSchemaStatus`, "The state of a FlowSchema.", {
      conditions: f(1, s.array(r("FlowSchemaCondition"), { listType: "map", listMapKeys: ["type"] }), "Its conditions (Dangling).", { patchStrategy: "merge", patchMergeKey: "type" }),
    }),
    type(`${pkg}.FlowSchemaCondition`, "A condition of a FlowSchema.", conditionFields),
    type(`${pkg}.PriorityLevelConfiguration`, "A priority level: how much of the server's concurrency its requests get and what happens to the excess.", {
      metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
      spec: f(2, r("PriorityLevelConfigurationSpec"), "The level's configuration."),
      status: f(3, r("PriorityLevelConfigurationStatus"), "The level's conditions."),
    }),
    type(`${pkg}.PriorityLevelConfigurationSpec`, "Exempt, or Limited with its limits.", {
      type: f(1, s.string(), "Exempt or Limited.", { required: true }),
      limited: f(2, r("LimitedPriorityLevelConfiguration"), "The limits, for type Limited."),
      exempt: f(3, r("ExemptPriorityLevelConfiguration"), "Borrowing parameters, for type Exempt."),
    }),
    type(`${pkg}.LimitedPriorityLevelConfiguration`, "The limits of a Limited priority level.", {
      nominalConcurrencyShares: f(1, s.int32(), "The level's share of the server's concurrency; default 30."),
      limitResponse: f(2, r("LimitResponse"), "What happens to requests over the limit."),
      lendablePercent: f(3, s.int32(), "The percentage of its seats other levels may borrow; default 0."),
      borrowingLimitPercent: f(4, s.int32(), "How many seats it may borrow, as a percentage of its own; unlimited when unset."),
    }),
    type(`${pkg}.ExemptPriorityLevelConfiguration`, "The borrowing parameters of an Exempt priority level.", {
      nominalConcurrencyShares: f(1, s.int32(), "Seats nominally reserved; default 0."),
      lendablePercent: f(2, s.int32(), "The percentage of its seats other levels may borrow; default 0."),
    }),
    type(`${pkg}.LimitResponse`, "Queue or Reject.", {
      type: f(1, s.string(), "Queue or Reject.", { required: true }),
      queuing: f(2, r("QueuingConfiguration"), "The queues, for type Queue."),
    }),
    type(`${pkg}.QueuingConfiguration`, "Shuffle-sharded queues.", {
      queues: f(1, s.int32(), "How many queues; default 64."),
      handSize: f(2, s.int32(), "How many queues a flow is dealt; default 8."),
      queueLengthLimit: f(3, s.int32(), "The longest a queue may get; default 50."),
    }),
    type(`${pkg}.PriorityLevelConfigurationStatus`, "The state of a priority level.", {
      conditions: f(1, s.array(r("PriorityLevelConfigurationCondition"), { listType: "map", listMapKeys: ["type"] }), "Its conditions.", { patchStrategy: "merge", patchMergeKey: "type" }),
    }),
    type(`${pkg}.PriorityLevelConfigurationCondition`, "A condition of a priority level.", conditionFields),
    listOf(pkg, "FlowSchema", "A list of FlowSchemas."),
    listOf(pkg, "PriorityLevelConfiguration", "A list of PriorityLevelConfigurations."),
  ];
}

export const FLOWCONTROL_TYPES: readonly TypeDef[] = [...flowcontrolTypes(FLOWCONTROL_V1), ...flowcontrolTypes(FLOWCONTROL_V1BETA3)];
