import { test } from "node:test";
import assert from "node:assert/strict";
import { POINTER_SCALARS } from "./presence.js";
import { builtinRegistry } from "./testing.js";

test("every pointer field named in presence.ts is a scalar field of a registered type", () => {
  const registry = builtinRegistry();
  for (const [typeName, fields] of Object.entries(POINTER_SCALARS)) {
    const def = registry.get(typeName);
    assert.ok(def !== undefined, `${typeName} is not registered`);
    for (const name of fields) {
      const field = def.fields[name];
      assert.ok(field !== undefined, `${typeName}.${name} does not exist`);
      assert.ok(["string", "integer", "boolean", "number"].includes(field.schema.type), `${typeName}.${name} is not a scalar`);
    }
  }
});
