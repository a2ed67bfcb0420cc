// The meta/v1 types objects embed (ObjectMeta, ListMeta, OwnerReference,
// LabelSelector, Condition, Status, DeleteOptions, ...) as schema data, with
// field numbers from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto.
// Every group references them by name; registerMetaSchemas is safe to call twice.

import { f, s, type, type SchemaRegistry, type TypeDef } from "../../machinery/schema.js";

export const META_V1 = "io.k8s.apimachinery.pkg.apis.meta.v1";

const meta = (name: string) => s.ref(`${META_V1}.${name}`);

export const objectMeta = type(`${META_V1}.ObjectMeta`, "Metadata every persisted object carries: identity, version, labels, annotations and ownership.", {
  name: f(1, s.string(), "Unique name within the namespace (or the cluster, for cluster-scoped kinds). Cannot be updated."),
  generateName: f(2, s.string(), "Prefix for a server-generated unique name, used only when name is empty."),
  namespace: f(3, s.string(), "The namespace the object lives in; empty for cluster-scoped kinds. Cannot be updated."),
  selfLink: f(4, s.string(), "Deprecated and never set by the server."),
  uid: f(5, s.string(), "Server-generated unique identifier, unique in time and space. Read-only."),
  resourceVersion: f(6, s.string(), "Opaque version of the object as stored; pass it back unchanged for optimistic concurrency. Read-only."),
  generation: f(7, s.int64(), "Sequence number of the desired state; bumped on spec changes. Read-only."),
  creationTimestamp: f(8, s.time(), "CreationTimestamp is a timestamp of when the server created the object (RFC 3339, UTC). Read-only."),
  deletionTimestamp: f(9, s.time(), "When the object will be removed; set by a delete request while finalizers remain. Read-only."),
  deletionGracePeriodSeconds: f(10, s.int64(), "Seconds the object has to terminate gracefully; set with deletionTimestamp. Read-only."),
  labels: f(11, s.map(s.string()), "Key/value pairs to organize and select objects."),
  annotations: f(12, s.map(s.string()), "Unstructured key/value data for tools; not queryable."),
  ownerReferences: f(13, s.array(meta("OwnerReference"), { listType: "map", listMapKeys: ["uid"] }), "Objects this one depends on; it is garbage-collected once all of them are gone.", {
    patchStrategy: "merge",
    patchMergeKey: "uid",
  }),
  finalizers: f(14, s.array(s.string(), { listType: "set" }), "Entries that must be removed before the object is deleted from storage.", { patchStrategy: "merge" }),
  managedFields: f(17, s.array(meta("ManagedFieldsEntry"), { listType: "atomic" }), "Which manager owns which fields (server-side apply bookkeeping)."),
});

export const listMeta = type(`${META_V1}.ListMeta`, "Metadata of lists and other synthetic responses.", {
  selfLink: f(1, s.string(), "Deprecated and never set by the server."),
  resourceVersion: f(2, s.string(), "The version at which the list was read. Read-only."),
  continue: f(3, s.string(), "Token for the next chunk of a paged list; empty when no more items remain."),
  remainingItemCount: f(4, s.int64(), "How many items follow this chunk; only set for unfiltered paged lists."),
  // Sharded list and watch (seed 000) is newer than v1.33: the number is the
  // next free one in ListMeta and has not been checked against a released proto.
  shardInfo: f(5, meta("ShardInfo"), "Echo of the shard selector when the server honored one (alpha)."),
});

export const shardInfo = type(`${META_V1}.ShardInfo`, "Which shard of a collection a sharded list or watch returned.", {
  selector: f(1, s.string(), "The shard selector the server applied."),
});

export const ownerReference = type(`${META_V1}.OwnerReference`, "Identifies an owning object in the same namespace (or a cluster-scoped owner).", {
  apiVersion: f(5, s.string(), "API version of the owner.", { required: true }),
  kind: f(1, s.string(), "Kind of the owner.", { required: true }),
  name: f(3, s.string(), "Name of the owner.", { required: true }),
  uid: f(4, s.string(), "UID of the owner.", { required: true }),
  controller: f(6, s.bool(), "True when this owner is the managing controller; at most one owner may be."),
  blockOwnerDeletion: f(7, s.bool(), "With foreground deletion, the owner waits until this reference is gone."),
});

export const managedFieldsEntry = type(`${META_V1}.ManagedFieldsEntry`, "A manager, its operation and the set of fields it owns.", {
  manager: f(1, s.string(), "Name of the workflow that manages these fields."),
  operation: f(2, s.string({ enum: ["Apply", "Update"] }), "Apply or Update."),
  apiVersion: f(3, s.string(), "The version of the resource the field set is written in."),
  time: f(4, s.time(), "When the entry was last changed."),
  fieldsType: f(6, s.string(), "Format of the field set; always FieldsV1."),
  fieldsV1: f(7, s.any(), "The owned fields as a trie of f:/k:/v:/i: keys."),
  subresource: f(8, s.string(), "The subresource the update went through, empty for the main resource."),
});

export const labelSelector = type(`${META_V1}.LabelSelector`, "A label query: matchLabels and matchExpressions are ANDed; empty matches everything, null nothing.", {
  matchLabels: f(1, s.map(s.string()), "Labels that must be present with these exact values."),
  matchExpressions: f(2, s.array(meta("LabelSelectorRequirement"), { listType: "atomic" }), "Set-based requirements."),
});

export const labelSelectorRequirement = type(`${META_V1}.LabelSelectorRequirement`, "One set-based label requirement.", {
  key: f(1, s.string(), "The label key.", { required: true, patchStrategy: "merge", patchMergeKey: "key" }),
  operator: f(2, s.string({ enum: ["In", "NotIn", "Exists", "DoesNotExist"] }), "In, NotIn, Exists or DoesNotExist.", { required: true }),
  values: f(3, s.array(s.string(), { listType: "atomic" }), "Values for In and NotIn; empty for Exists and DoesNotExist."),
});

export const condition = type(`${META_V1}.Condition`, "One aspect of an object's observed state (the standard status.conditions entry).", {
  type: f(1, s.string(), "Condition type in CamelCase or as example.com/CamelCase.", { required: true }),
  status: f(2, s.string({ enum: ["True", "False", "Unknown"] }), "True, False or Unknown.", { required: true }),
  observedGeneration: f(3, s.int64(), "The metadata.generation this condition was computed from."),
  lastTransitionTime: f(4, s.time(), "When status last changed.", { required: true }),
  reason: f(5, s.string(), "CamelCase programmatic reason for the last transition.", { required: true }),
  message: f(6, s.string(), "Human-readable details; may be empty.", { required: true }),
});

/**
 * The fields of the older, per-kind condition types that carry a probe time
 * (upstream's JobCondition, PersistentVolumeClaimCondition, PodCondition):
 * same names, same Protobuf numbers, none of metav1.Condition's required ones.
 */
export const probedConditionFields = {
  type: f(1, s.string(), "The kind of condition.", { required: true }),
  status: f(2, s.string(), "True, False or Unknown.", { required: true }),
  lastProbeTime: f(3, s.time(), "When the condition was last checked."),
  lastTransitionTime: f(4, s.time(), "When the status last changed."),
  reason: f(5, s.string(), "A one-word, CamelCase reason for the last change."),
  message: f(6, s.string(), "A human-readable explanation of the last change."),
};

export const status = type(`${META_V1}.Status`, "The result of an operation that returns no object, and the body of every error.", {
  metadata: f(1, meta("ListMeta"), "Standard list metadata."),
  status: f(2, s.string(), "Success or Failure."),
  message: f(3, s.string(), "Human-readable description of the result."),
  reason: f(4, s.string(), "Machine-readable reason for a Failure; clarifies the HTTP code."),
  details: f(5, meta("StatusDetails"), "Extra data that depends on the reason."),
  code: f(6, s.int32(), "The suggested HTTP status code; 0 when unset."),
});

export const statusDetails = type(`${META_V1}.StatusDetails`, "Which resource a Status is about, and its causes.", {
  name: f(1, s.string(), "Name of the resource, when there is one."),
  group: f(2, s.string(), "API group of the resource."),
  kind: f(3, s.string(), "Kind (or resource) of the object."),
  uid: f(6, s.string(), "UID of the resource, when there is one."),
  causes: f(4, s.array(meta("StatusCause"), { listType: "atomic" }), "Per-field details of the failure."),
  retryAfterSeconds: f(5, s.int32(), "Seconds to wait before retrying, when the reason says to."),
});

export const statusCause = type(`${META_V1}.StatusCause`, "One cause of a failure, usually a field and what is wrong with it.", {
  reason: f(1, s.string(), "Machine-readable cause (FieldValueRequired, FieldValueInvalid, ...)."),
  message: f(2, s.string(), "Human-readable description of the cause."),
  field: f(3, s.string(), "The field path at fault, e.g. spec.containers[0].image."),
});

export const deleteOptions = type(`${META_V1}.DeleteOptions`, "The body of a DELETE request (seed 000, \"Delete options\").", {
  gracePeriodSeconds: f(1, s.int64(), "Seconds before the object is removed; 0 means at once, unset means the kind's default."),
  preconditions: f(2, meta("Preconditions"), "Must match the object for the delete to proceed (409 otherwise)."),
  orphanDependents: f(3, s.bool(), "Deprecated: use propagationPolicy."),
  propagationPolicy: f(4, s.string({ enum: ["Orphan", "Background", "Foreground"] }), "How dependents are garbage-collected."),
  dryRun: f(5, s.array(s.string(), { listType: "atomic" }), "All: run every stage but do not persist."),
  ignoreStoreReadErrorWithClusterBreakingPotential: f(
    6,
    s.bool(),
    "Remove an object that cannot be read or decoded (gate AllowUnsafeMalformedObjectDeletion); skips finalizers.",
  ),
});

export const preconditions = type(`${META_V1}.Preconditions`, "Conditions a write requires of the stored object.", {
  uid: f(1, s.string(), "The uid the object must have."),
  resourceVersion: f(2, s.string(), "The resourceVersion the object must have."),
});


// Representations the API server converts objects to (seed 000, "Table
// representation", "Metadata-only representation"); numbers from upstream's
// meta/v1 generated.proto. Cells and row objects are RawExtensions (JSON bytes).

export const partialObjectMetadata = type(`${META_V1}.PartialObjectMetadata`, "An object's metadata only (spec and status left out).", {
  metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
});

export const partialObjectMetadataList = type(`${META_V1}.PartialObjectMetadataList`, "A collection as the metadata of its members.", {
  metadata: f(1, meta("ListMeta"), "Standard list metadata."),
  items: f(2, s.array(meta("PartialObjectMetadata")), "The members' metadata.", { required: true }),
});

export const table = type(`${META_V1}.Table`, "A tabular view of objects, as `kubectl get` prints it.", {
  metadata: f(1, meta("ListMeta"), "Standard list metadata."),
  columnDefinitions: f(2, s.array(meta("TableColumnDefinition")), "The columns, in order.", { required: true }),
  rows: f(3, s.array(meta("TableRow")), "One row per object.", { required: true }),
});

export const tableColumnDefinition = type(`${META_V1}.TableColumnDefinition`, "A column of a Table.", {
  name: f(1, s.string(), "Human-readable column name.", { required: true }),
  type: f(2, s.string(), "OpenAPI type of the cells: string, integer, number, boolean, date.", { required: true }),
  format: f(3, s.string(), "OpenAPI format refining the type (name, ...).", { required: true }),
  description: f(4, s.string(), "What the column shows.", { required: true }),
  priority: f(5, s.int32(), "0: shown by default; higher: wider output only.", { required: true }),
});

export const tableRow = type(`${META_V1}.TableRow`, "One object's row of a Table.", {
  cells: f(1, s.array(s.rawExtension()), "One cell per column definition.", { required: true }),
  conditions: f(2, s.array(meta("TableRowCondition")), "Conditions of the row (Completed for finished pods)."),
  object: f(3, s.rawExtension(), "The object, its metadata, or nothing, as includeObject asked."),
});

export const tableRowCondition = type(`${META_V1}.TableRowCondition`, "A condition of a Table row.", {
  type: f(1, s.string(), "Condition type.", { required: true }),
  status: f(2, s.string(), "True, False or Unknown.", { required: true }),
  reason: f(3, s.string(), "Machine-readable reason."),
  message: f(4, s.string(), "Human-readable message."),
});

export const META_TYPES: readonly TypeDef[] = [
  objectMeta,
  listMeta,
  shardInfo,
  ownerReference,
  managedFieldsEntry,
  labelSelector,
  labelSelectorRequirement,
  condition,
  status,
  statusDetails,
  statusCause,
  deleteOptions,
  preconditions,
  partialObjectMetadata,
  partialObjectMetadataList,
  table,
  tableColumnDefinition,
  tableRow,
  tableRowCondition,
];

/** Register the meta/v1 types once; a second call (another group doing the same) is a no-op. */
export function registerMetaSchemas(registry: SchemaRegistry): void {
  if (registry.get(objectMeta.name) !== undefined) return;
  registry.add(...META_TYPES);
}
