// The OpenAPI v2 document as Protobuf: gnostic's `openapi.v2.Document`
// message (github.com/google/gnostic, openapiv2/OpenAPIv2.proto), which
// kubectl 1.27 and 1.28 ask /openapi/v2 for first
// (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`). Declared
// for the schema-driven codec: field names are the JSON names the API server
// fills in, tags are gnostic's field numbers. gnostic's `repeated NamedX`
// pairs (name = 1, value = 2) are declared as maps: a map entry has the same
// wire form. Only the fields the API server writes are declared; oneofs are
// plain optional fields (at most one is set). Vendor extensions and defaults
// travel as `Any { yaml = 2 }` holding the value as YAML (JSON is YAML).

import { f, s, SchemaRegistry, type TypeDef } from "../../schema.js";

export const OPENAPI_V2_DOCUMENT = "openapi.v2.Document";

const t = (name: string, fields: TypeDef["fields"]): TypeDef => ({ name: `openapi.v2.${name}`, description: `gnostic openapi.v2.${name}`, fields });
const ref = (name: string) => s.ref(`openapi.v2.${name}`);
const d = "";

const TYPES: TypeDef[] = [
  t("Document", {
    swagger: f(1, s.string(), d),
    info: f(2, ref("Info"), d),
    host: f(3, s.string(), d),
    basePath: f(4, s.string(), d),
    schemes: f(5, s.array(s.string()), d),
    consumes: f(6, s.array(s.string()), d),
    produces: f(7, s.array(s.string()), d),
    paths: f(8, ref("Paths"), d),
    definitions: f(9, ref("Definitions"), d),
    vendorExtension: f(16, s.map(ref("Any")), d),
  }),
  t("Info", {
    title: f(1, s.string(), d),
    version: f(2, s.string(), d),
    description: f(3, s.string(), d),
    vendorExtension: f(7, s.map(ref("Any")), d),
  }),
  t("Any", { yaml: f(2, s.string(), d) }),
  t("Paths", {
    vendorExtension: f(1, s.map(ref("Any")), d),
    path: f(2, s.map(ref("PathItem")), d),
  }),
  t("PathItem", {
    ref: f(1, s.string(), d),
    get: f(2, ref("Operation"), d),
    put: f(3, ref("Operation"), d),
    post: f(4, ref("Operation"), d),
    delete: f(5, ref("Operation"), d),
    options: f(6, ref("Operation"), d),
    head: f(7, ref("Operation"), d),
    patch: f(8, ref("Operation"), d),
    parameters: f(9, s.array(ref("ParametersItem")), d),
    vendorExtension: f(10, s.map(ref("Any")), d),
  }),
  t("Operation", {
    tags: f(1, s.array(s.string()), d),
    summary: f(2, s.string(), d),
    description: f(3, s.string(), d),
    operationId: f(5, s.string(), d),
    produces: f(6, s.array(s.string()), d),
    consumes: f(7, s.array(s.string()), d),
    parameters: f(8, s.array(ref("ParametersItem")), d),
    responses: f(9, ref("Responses"), d),
    schemes: f(10, s.array(s.string()), d),
    deprecated: f(11, s.bool(), d),
    vendorExtension: f(13, s.map(ref("Any")), d),
  }),
  t("ParametersItem", {
    parameter: f(1, ref("Parameter"), d),
    jsonReference: f(2, ref("JsonReference"), d),
  }),
  t("JsonReference", { ref: f(1, s.string(), d), description: f(2, s.string(), d) }),
  t("Parameter", {
    bodyParameter: f(1, ref("BodyParameter"), d),
    nonBodyParameter: f(2, ref("NonBodyParameter"), d),
  }),
  t("BodyParameter", {
    description: f(1, s.string(), d),
    name: f(2, s.string(), d),
    in: f(3, s.string(), d),
    required: f(4, s.bool(), d),
    schema: f(5, ref("Schema"), d),
    vendorExtension: f(6, s.map(ref("Any")), d),
  }),
  t("NonBodyParameter", {
    headerParameterSubSchema: f(1, ref("HeaderParameterSubSchema"), d),
    formDataParameterSubSchema: f(2, ref("FormDataParameterSubSchema"), d),
    queryParameterSubSchema: f(3, ref("QueryParameterSubSchema"), d),
    pathParameterSubSchema: f(4, ref("PathParameterSubSchema"), d),
  }),
  // Header, form-data and path sub-schemas number their fields alike up to `type`;
  // query and form-data carry allow_empty_value at 5 and so sit one further on.
  t("HeaderParameterSubSchema", { required: f(1, s.bool(), d), in: f(2, s.string(), d), description: f(3, s.string(), d), name: f(4, s.string(), d), type: f(5, s.string(), d), format: f(6, s.string(), d), uniqueItems: f(19, s.bool(), d) }),
  t("FormDataParameterSubSchema", { required: f(1, s.bool(), d), in: f(2, s.string(), d), description: f(3, s.string(), d), name: f(4, s.string(), d), allowEmptyValue: f(5, s.bool(), d), type: f(6, s.string(), d), format: f(7, s.string(), d), uniqueItems: f(20, s.bool(), d) }),
  t("QueryParameterSubSchema", { required: f(1, s.bool(), d), in: f(2, s.string(), d), description: f(3, s.string(), d), name: f(4, s.string(), d), allowEmptyValue: f(5, s.bool(), d), type: f(6, s.string(), d), format: f(7, s.string(), d), uniqueItems: f(20, s.bool(), d) }),
  t("PathParameterSubSchema", { required: f(1, s.bool(), d), in: f(2, s.string(), d), description: f(3, s.string(), d), name: f(4, s.string(), d), type: f(5, s.string(), d), format: f(6, s.string(), d), uniqueItems: f(19, s.bool(), d) }),
  t("Responses", {
    responseCode: f(1, s.map(ref("ResponseValue")), d),
    vendorExtension: f(2, s.map(ref("Any")), d),
  }),
  t("ResponseValue", {
    response: f(1, ref("Response"), d),
    jsonReference: f(2, ref("JsonReference"), d),
  }),
  t("Response", {
    description: f(1, s.string(), d),
    schema: f(2, ref("SchemaItem"), d),
    vendorExtension: f(5, s.map(ref("Any")), d),
  }),
  t("SchemaItem", { schema: f(1, ref("Schema"), d) }),
  t("Definitions", { additionalProperties: f(1, s.map(ref("Schema")), d) }),
  t("Properties", { additionalProperties: f(1, s.map(ref("Schema")), d) }),
  t("AdditionalPropertiesItem", { schema: f(1, ref("Schema"), d), boolean: f(2, s.bool(), d) }),
  t("TypeItem", { value: f(1, s.array(s.string()), d) }),
  t("ItemsItem", { schema: f(1, s.array(ref("Schema")), d) }),
  t("Schema", {
    ref: f(1, s.string(), d),
    format: f(2, s.string(), d),
    title: f(3, s.string(), d),
    description: f(4, s.string(), d),
    default: f(5, ref("Any"), d),
    maxLength: f(11, s.int64(), d),
    minLength: f(12, s.int64(), d),
    pattern: f(13, s.string(), d),
    uniqueItems: f(16, s.bool(), d),
    required: f(19, s.array(s.string()), d),
    enum: f(20, s.array(ref("Any")), d),
    additionalProperties: f(21, ref("AdditionalPropertiesItem"), d),
    type: f(22, ref("TypeItem"), d),
    items: f(23, ref("ItemsItem"), d),
    allOf: f(24, s.array(ref("Schema")), d),
    properties: f(25, ref("Properties"), d),
    readOnly: f(27, s.bool(), d),
    vendorExtension: f(31, s.map(ref("Any")), d),
  }),
];

let registry: SchemaRegistry | undefined;

/** The gnostic OpenAPI v2 types, in a registry of their own (never served as API kinds). */
export function openApiV2Types(): SchemaRegistry {
  return (registry ??= new SchemaRegistry().add(...TYPES));
}
