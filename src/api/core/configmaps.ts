// configmaps: keys checked as upstream's config keys, no key in both data and
// binaryData, at most 1 MiB of data, and `immutable: true` freezes the data.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import { isConfigMapKey, jsonEqual } from "./validation.js";
import type { ConfigMap } from "./types.js";

/** upstream's MaxSecretSize, which config maps share. */
export const MAX_DATA_BYTES = 1024 * 1024;
export const IMMUTABLE_DATA_MSG = "field is immutable when `immutable` is set";

function validateConfigMap(cm: ConfigMap): FieldError[] {
  const errs: FieldError[] = [];
  const data = cm.data ?? {};
  const binary = cm.binaryData ?? {};
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const msg of isConfigMapKey(key)) errs.push(field.invalid(`data[${key}]`, key, msg));
    if (key in binary) errs.push(field.invalid(`data[${key}]`, key, "duplicate of key present in binaryData"));
    size += Buffer.byteLength(String(value));
  }
  for (const [key, value] of Object.entries(binary)) {
    for (const msg of isConfigMapKey(key)) errs.push(field.invalid(`binaryData[${key}]`, key, msg));
    if (key in data) errs.push(field.invalid(`binaryData[${key}]`, key, "duplicate of key present in data"));
    size += Buffer.from(String(value), "base64").length;
  }
  if (size > MAX_DATA_BYTES) errs.push(field.tooLong("", MAX_DATA_BYTES));
  return errs;
}

export function configMapsResource(): ResourceDefinition {
  return defineResource<ConfigMap>({
    group: "",
    versions: ["v1"],
    resource: "configmaps",
    singular: "configmap",
    kind: "ConfigMap",
    namespaced: true,
    shortNames: ["cm"],
    schema: `${CORE_V1}.ConfigMap`,

    validate: validateConfigMap,
    validateUpdate(cm, old) {
      const errs: FieldError[] = [];
      if (old.immutable === true) {
        if (cm.immutable !== true) errs.push(field.forbidden("immutable", IMMUTABLE_DATA_MSG));
        if (!jsonEqual(cm.data ?? {}, old.data ?? {})) errs.push(field.forbidden("data", IMMUTABLE_DATA_MSG));
        if (!jsonEqual(cm.binaryData ?? {}, old.binaryData ?? {})) errs.push(field.forbidden("binaryData", IMMUTABLE_DATA_MSG));
      }
      return [...errs, ...validateConfigMap(cm)];
    },

    table: nameAgeTable<ConfigMap>({
      columns: [{ name: "Data", type: "string", description: "Number of keys in data and binaryData.", priority: 0 }],
      cells: (cm) => [Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length],
    }),
  });
}
