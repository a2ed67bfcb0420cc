import { test } from "node:test";
import assert from "node:assert/strict";
import { defineResource } from "../../api/resource.js";
import { table } from "./table.js";

test("a kind without columns of its own gets the default Table columns: Name (string, name) and Created At (date)", () => {
  const def = defineResource({ group: "samples.orch.io", versions: ["v1"], resource: "gadgets", singular: "gadget", kind: "Gadget", namespaced: true, schema: "" });
  const obj = { apiVersion: "samples.orch.io/v1", kind: "Gadget", metadata: { name: "g", creationTimestamp: "2026-11-24T10:00:00Z" } };
  const t = table(def, [obj], { now: new Date(), include: "Metadata", group: "meta.orch.io", version: "v1" }) as any;
  assert.deepEqual(t.columnDefinitions.map((c: any) => [c.name, c.type, c.format]), [["Name", "string", "name"], ["Created At", "date", ""]]);
  assert.deepEqual(t.rows[0].cells, ["g", "2026-11-24T10:00:00Z"]);
  assert.equal(t.rows[0].object.kind, "PartialObjectMetadata");
});
