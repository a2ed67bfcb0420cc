// secrets: stringData folded into data on every write (and never stored),
// type Opaque by default and immutable after creation, the per-type required
// keys of upstream (tls, dockerconfigjson, basic-auth, ...), `immutable: true`
// freezing the data. Type names use the naming table's key domain.

import { field, FIELD_IMMUTABLE_ERROR_MSG, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { IMMUTABLE_DATA_MSG, MAX_DATA_BYTES } from "./configmaps.js";
import { CORE_V1 } from "./schemas.js";
import { isConfigMapKey, jsonEqual } from "./validation.js";
import type { Secret } from "./types.js";

function decode(value: unknown): Buffer {
  return Buffer.from(typeof value === "string" ? value : "", "base64");
}

function validateSecret(secret: Secret, naming: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const data = secret.data ?? {};
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const msg of isConfigMapKey(key)) errs.push(field.invalid(`data[${key}]`, key, msg));
    size += decode(value).length;
  }
  if (size > MAX_DATA_BYTES) errs.push(field.tooLong("data", MAX_DATA_BYTES));

  const d = naming.keyDomain;
  const has = (key: string) => key in data;
  const json = (key: string) => {
    if (!has(key)) return errs.push(field.required(`data[${key}]`, ""));
    try {
      const parsed: unknown = JSON.parse(decode(data[key]).toString("utf8"));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object");
    } catch (err) {
      errs.push(field.invalid(`data[${key}]`, "<secret contents redacted>", (err as Error).message));
    }
    return 0;
  };
  switch (secret.type) {
    case `${d}/service-account-token`:
      if (!secret.metadata.annotations?.[`${d}/service-account.name`]) {
        errs.push(field.required(`metadata.annotations[${d}/service-account.name]`, ""));
      }
      break;
    case `${d}/dockercfg`:
      json(".dockercfg");
      break;
    case `${d}/dockerconfigjson`:
      json(".dockerconfigjson");
      break;
    case `${d}/basic-auth`:
      if (!has("username") && !has("password")) errs.push(field.required("data[username]", ""), field.required("data[password]", ""));
      break;
    case `${d}/ssh-auth`:
      if (decode(data["ssh-privatekey"]).length === 0) errs.push(field.required("data[ssh-privatekey]", ""));
      break;
    case `${d}/tls`:
      if (!has("tls.crt")) errs.push(field.required("data[tls.crt]", ""));
      if (!has("tls.key")) errs.push(field.required("data[tls.key]", ""));
      break;
  }
  return errs;
}

export function secretsResource(naming: Naming): ResourceDefinition {
  return defineResource<Secret>({
    group: "",
    versions: ["v1"],
    resource: "secrets",
    singular: "secret",
    kind: "Secret",
    namespaced: true,
    schema: `${CORE_V1}.Secret`,

    // stringData is write-only convenience: merged over data, then dropped.
    defaults(secret) {
      if (secret.stringData && typeof secret.stringData === "object") {
        const data = (secret.data ??= {});
        for (const [key, value] of Object.entries(secret.stringData)) data[key] = Buffer.from(String(value), "utf8").toString("base64");
      }
      delete secret.stringData;
    },
    validate: (secret) => validateSecret(secret, naming),
    validateUpdate(secret, old) {
      const errs: FieldError[] = [];
      if (secret.type !== old.type) errs.push(field.invalid("type", secret.type ?? "", FIELD_IMMUTABLE_ERROR_MSG));
      if (old.immutable === true) {
        if (secret.immutable !== true) errs.push(field.forbidden("immutable", IMMUTABLE_DATA_MSG));
        if (!jsonEqual(secret.data ?? {}, old.data ?? {})) errs.push(field.forbidden("data", IMMUTABLE_DATA_MSG));
      }
      return [...errs, ...validateSecret(secret, naming)];
    },

    table: nameAgeTable<Secret>({
      columns: [
        { name: "Type", type: "string", description: "The type of the secret.", priority: 0 },
        { name: "Data", type: "string", description: "Number of keys in data.", priority: 0 },
      ],
      cells: (s) => [s.type ?? "", Object.keys(s.data ?? {}).length],
    }),
    fieldSelectors: { type: (s) => s.type ?? "" },
  });
}
