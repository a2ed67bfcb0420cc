// The apiextensions.<suffix>/v1 kinds as schema data (definition names keep
// upstream's `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1`; field
// numbers from its generated.proto). JSON-valued fields (default, enum,
// example, items, additionalProperties) are free-form here: they are checked
// by the CRD's validation (./validation.ts), not by the decoder. The kind is
// served as JSON only (no Protobuf form: those fields have no fixed one here).

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const APIEXTENSIONS_V1 = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1";

const ext = (name: string) => s.ref(`${APIEXTENSIONS_V1}.${name}`);
const strings = (tag: number, description: string) => f(tag, s.array(s.string(), { listType: "atomic" }), description);
const props = () => s.ref(`${APIEXTENSIONS_V1}.JSONSchemaProps`);

export const APIEXTENSIONS_TYPES: readonly TypeDef[] = [
  type(`${APIEXTENSIONS_V1}.CustomResourceDefinition`, "A resource kind served by the API server from a definition: its names, scope, versions and schemas.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata; the name is <plural>.<group>."),
    spec: f(2, ext("CustomResourceDefinitionSpec"), "How the resource should be served.", { required: true }),
    status: f(3, ext("CustomResourceDefinitionStatus"), "The accepted names and conditions of the definition."),
  }),
  listOf(APIEXTENSIONS_V1, "CustomResourceDefinition", "A list of CustomResourceDefinitions."),
  type(`${APIEXTENSIONS_V1}.CustomResourceDefinitionSpec`, "How a custom resource is served.", {
    group: f(1, s.string(), "The API group of the resource (/apis/<group>/<version>).", { required: true }),
    names: f(3, ext("CustomResourceDefinitionNames"), "The resource and kind names.", { required: true }),
    scope: f(4, s.string(), "Cluster or Namespaced.", { required: true }),
    versions: f(7, s.array(ext("CustomResourceDefinitionVersion"), { listType: "atomic" }), "The served versions; exactly one is the storage version.", { required: true }),
    conversion: f(9, ext("CustomResourceConversion"), "How objects are converted between versions."),
    preserveUnknownFields: f(10, s.bool(), "Deprecated: keep fields the schema does not name (must be false)."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceDefinitionNames`, "The names a custom resource is served under.", {
    plural: f(1, s.string(), "The plural resource name, the URL segment.", { required: true }),
    singular: f(2, s.string(), "The singular name (default: the kind in lower case)."),
    shortNames: strings(3, "Short aliases for kubectl."),
    kind: f(4, s.string(), "The kind, in CamelCase.", { required: true }),
    listKind: f(5, s.string(), "The kind of lists (default: <kind>List)."),
    categories: strings(6, "Groups the resource belongs to (`all` makes `kubectl get all` list it)."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceDefinitionVersion`, "One version of a custom resource.", {
    name: f(1, s.string(), "The version name (v1, v1beta1, ...).", { required: true }),
    served: f(2, s.bool(), "Whether the version is served.", { required: true }),
    storage: f(3, s.bool(), "Whether objects are stored in this version; exactly one version is.", { required: true }),
    deprecated: f(7, s.bool(), "Whether requests to this version get a deprecation warning."),
    deprecationWarning: f(8, s.string(), "The warning sent instead of the default one."),
    schema: f(4, ext("CustomResourceValidation"), "The schema of the version's objects."),
    subresources: f(5, ext("CustomResourceSubresources"), "The status and scale subresources."),
    additionalPrinterColumns: f(6, s.array(ext("CustomResourceColumnDefinition"), { listType: "atomic" }), "Columns of the Table representation (kubectl get)."),
    selectableFields: f(9, s.array(ext("SelectableField"), { listType: "atomic" }), "Fields usable in field selectors."),
  }),
  type(`${APIEXTENSIONS_V1}.SelectableField`, "A field usable in field selectors.", {
    jsonPath: f(1, s.string(), "A simple JSON path to a string, integer or boolean field.", { required: true }),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceValidation`, "The schema of a version.", {
    openAPIV3Schema: f(1, props(), "The OpenAPI v3 schema objects are validated, pruned and defaulted with."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceSubresources`, "Which subresources a version serves.", {
    status: f(1, s.any(), "Serve /status (an empty object enables it)."),
    scale: f(2, ext("CustomResourceSubresourceScale"), "Serve /scale."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceSubresourceScale`, "Where /scale reads and writes.", {
    specReplicasPath: f(1, s.string(), "JSON path of the desired replicas, under .spec.", { required: true }),
    statusReplicasPath: f(2, s.string(), "JSON path of the observed replicas, under .status.", { required: true }),
    labelSelectorPath: f(3, s.string(), "JSON path of the label selector (as a string), under .spec or .status."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceColumnDefinition`, "A column of the Table representation.", {
    name: f(1, s.string(), "The column's header.", { required: true }),
    type: f(2, s.string(), "integer, number, string, boolean or date.", { required: true }),
    format: f(3, s.string(), "An optional format (int32, int64, float, double, byte, date, date-time, password, name)."),
    description: f(4, s.string(), "What the column shows."),
    priority: f(5, s.int32(), "0: shown by default; more: with -o wide."),
    jsonPath: f(6, s.string(), "A simple JSON path into each object.", { required: true }),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceConversion`, "How objects are converted between versions.", {
    strategy: f(1, s.string(), "None (only apiVersion changes) or Webhook.", { required: true }),
    webhook: f(2, ext("WebhookConversion"), "The conversion webhook, for strategy Webhook."),
  }),
  type(`${APIEXTENSIONS_V1}.WebhookConversion`, "A conversion webhook.", {
    clientConfig: f(2, ext("WebhookClientConfig"), "How to reach the webhook."),
    conversionReviewVersions: strings(3, "The ConversionReview versions the webhook accepts.", ),
  }),
  type(`${APIEXTENSIONS_V1}.WebhookClientConfig`, "How to reach a webhook.", {
    url: f(3, s.string(), "The webhook's URL (https)."),
    service: f(1, ext("ServiceReference"), "The service the webhook runs behind."),
    caBundle: f(2, s.string({ format: "byte" }), "PEM CA bundle that signs the webhook's certificate."),
  }),
  type(`${APIEXTENSIONS_V1}.ServiceReference`, "A reference to a service.", {
    namespace: f(1, s.string(), "The service's namespace.", { required: true }),
    name: f(2, s.string(), "The service's name.", { required: true }),
    path: f(3, s.string(), "The URL path requests go to."),
    port: f(4, s.int32(), "The service port (default 443)."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceDefinitionStatus`, "The observed state of a definition.", {
    conditions: f(1, s.array(ext("CustomResourceDefinitionCondition"), { listType: "map", listMapKeys: ["type"] }), "NamesAccepted, Established, Terminating."),
    acceptedNames: f(2, ext("CustomResourceDefinitionNames"), "The names actually served."),
    storedVersions: strings(3, "Versions objects have been stored in."),
  }),
  type(`${APIEXTENSIONS_V1}.CustomResourceDefinitionCondition`, "One condition of a definition.", {
    type: f(1, s.string(), "NamesAccepted, Established or Terminating.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastTransitionTime: f(3, s.time(), "When the status last changed."),
    reason: f(4, s.string(), "A CamelCase reason."),
    message: f(5, s.string(), "A human-readable message."),
  }),
  type(`${APIEXTENSIONS_V1}.ValidationRule`, "A CEL validation rule.", {
    rule: f(1, s.string(), "The CEL expression.", { required: true }),
    message: f(2, s.string(), "The message when the rule fails."),
    messageExpression: f(3, s.string(), "A CEL expression giving the message."),
    reason: f(4, s.string(), "The error reason (FieldValueInvalid, ...)."),
    fieldPath: f(5, s.string(), "Where the error points."),
    optionalOldSelf: f(6, s.bool(), "Evaluate the rule on creates too, with oldSelf absent."),
  }),
  type(`${APIEXTENSIONS_V1}.ExternalDocumentation`, "A link to more documentation.", {
    description: f(1, s.string(), "What it is."),
    url: f(2, s.string(), "Where it is."),
  }),
  type(`${APIEXTENSIONS_V1}.JSONSchemaProps`, "An OpenAPI v3 schema (the subset upstream accepts, with the x-kubernetes extensions).", {
    id: f(1, s.string(), "Not supported."),
    $schema: f(2, s.string(), "The schema's dialect."),
    $ref: f(3, s.string(), "Not supported."),
    description: f(4, s.string(), "What the value is."),
    type: f(5, s.string(), "object, array, string, integer, number or boolean."),
    format: f(6, s.string(), "A string or number format (date-time, int32, ...)."),
    title: f(7, s.string(), "A title."),
    default: f(8, s.any(), "The value set when the field is absent."),
    maximum: f(9, s.double(), "Largest value."),
    exclusiveMaximum: f(10, s.bool(), "Whether maximum itself is excluded."),
    minimum: f(11, s.double(), "Smallest value."),
    exclusiveMinimum: f(12, s.bool(), "Whether minimum itself is excluded."),
    maxLength: f(13, s.int64(), "Longest string, in characters."),
    minLength: f(14, s.int64(), "Shortest string, in characters."),
    pattern: f(15, s.string(), "A regular expression strings must match."),
    maxItems: f(16, s.int64(), "Most items."),
    minItems: f(17, s.int64(), "Fewest items."),
    uniqueItems: f(18, s.bool(), "Not supported (must be false)."),
    multipleOf: f(19, s.double(), "Numbers must be a multiple of this."),
    enum: f(20, s.any(), "The allowed values."),
    maxProperties: f(21, s.int64(), "Most properties."),
    minProperties: f(22, s.int64(), "Fewest properties."),
    required: strings(23, "Properties that must be present."),
    items: f(24, s.any(), "The schema of array items."),
    allOf: f(25, s.array(props(), { listType: "atomic" }), "Schemas the value must all satisfy."),
    oneOf: f(26, s.array(props(), { listType: "atomic" }), "Schemas exactly one of which the value satisfies."),
    anyOf: f(27, s.array(props(), { listType: "atomic" }), "Schemas at least one of which the value satisfies."),
    not: f(28, props(), "A schema the value must not satisfy."),
    properties: f(29, s.map(props()), "The schemas of an object's fields."),
    additionalProperties: f(30, s.any(), "The schema of a map's values (or a boolean)."),
    patternProperties: f(31, s.any(), "Not supported."),
    dependencies: f(32, s.any(), "Not supported."),
    additionalItems: f(33, s.any(), "Not supported."),
    definitions: f(34, s.any(), "Not supported."),
    externalDocs: f(35, ext("ExternalDocumentation"), "More documentation."),
    example: f(36, s.any(), "An example value."),
    nullable: f(37, s.bool(), "Whether null is allowed."),
    "x-kubernetes-preserve-unknown-fields": f(38, s.bool(), "Keep fields the schema does not name."),
    "x-kubernetes-embedded-resource": f(39, s.bool(), "The value is an object with apiVersion, kind and metadata."),
    "x-kubernetes-int-or-string": f(40, s.bool(), "The value is an integer or a string."),
    "x-kubernetes-list-map-keys": strings(41, "The keys of a list of type map."),
    "x-kubernetes-list-type": f(42, s.string(), "atomic, set or map."),
    "x-kubernetes-map-type": f(43, s.string(), "atomic or granular."),
    "x-kubernetes-validations": f(44, s.array(ext("ValidationRule"), { listType: "map", listMapKeys: ["rule"] }), "CEL validation rules."),
  }),
];
