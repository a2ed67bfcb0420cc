// Request body decoding and field validation, pure (no HTTP): JSON and YAML
// parsers with size, depth and alias limits that report duplicate keys, YAML
// output for responses, and unknown-field and type checks against the schemas.

export type { ParsedBody, JsonParseOptions } from "./json.js";
export { parseJsonBody, JsonSyntaxError, MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./json.js";
export type { ParsedYamlBody, YamlParseOptions, YamlDuplicateKey, ToYamlOptions } from "./yaml.js";
export { parseYamlBody, toYaml, yamlDuplicateMessage, MAX_YAML_DEPTH, MAX_YAML_ALIAS_COUNT } from "./yaml.js";
export type { FieldCheck, FieldValidationLevel, FieldValidationOptions } from "./field-validation.js";
export { checkFields, fieldValidation, parseFieldValidation, FIELD_VALIDATION_VALUES } from "./field-validation.js";
