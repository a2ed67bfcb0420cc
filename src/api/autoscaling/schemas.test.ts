import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { autoscalingModule } from "./index.js";

test("autoscaling/v1: only the Scale types, no resource of its own", () => {
  const registry = new SchemaRegistry();
  autoscalingModule.registerSchemas(registry);
  assert.deepEqual([...registry.all()].map((d) => d.name), [
    "io.k8s.api.autoscaling.v1.Scale",
    "io.k8s.api.autoscaling.v1.ScaleSpec",
    "io.k8s.api.autoscaling.v1.ScaleStatus",
  ]);
  assert.deepEqual(autoscalingModule.resources(namingFor()), []);
  const status = registry.mustGet("io.k8s.api.autoscaling.v1.ScaleStatus");
  assert.deepEqual([status.fields["replicas"]!.tag, status.fields["selector"]!.tag], [1, 2]);
  assert.equal(registry.mustGet("io.k8s.api.autoscaling.v1.ScaleSpec").fields["replicas"]!.tag, 1);
});
