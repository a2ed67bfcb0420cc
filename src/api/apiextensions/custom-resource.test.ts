// Version order of custom resources (upstream's kube-aware order) and the
// table cells of printer columns.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { compareVersions, customResource } from "./custom-resource.js";
import type { CustomResourceDefinition } from "./types.js";

describe("custom resource declarations", () => {
  test("versions in upstream's kube-aware order", () => {
    assert.deepEqual(["v1alpha1", "foo", "v1", "v2beta1", "v1beta2", "v10", "v2", "bar", "v1beta1", "v11alpha2"].sort(compareVersions), [
      "v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v11alpha2", "v1alpha1", "bar", "foo",
    ]);
  });

  test("the storage version stores, the most preferred served version leads, printer cells as upstream", () => {
    const crd: CustomResourceDefinition = {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "things.example.com" },
      spec: {
        group: "example.com",
        scope: "Cluster",
        names: { plural: "things", kind: "Thing" },
        versions: [
          { name: "v1beta1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            additionalPrinterColumns: [
              { name: "Count", type: "integer", jsonPath: ".spec.count" },
              { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
              { name: "Labels", type: "string", jsonPath: ".metadata.labels" },
              { name: "Since", type: "date", jsonPath: ".status.since" },
              { name: "Wrong", type: "boolean", jsonPath: ".spec.count" },
            ] },
          { name: "v1", served: true, storage: false },
        ],
      },
    };
    const def = customResource(crd, { terminating: () => false })!;
    assert.deepEqual(def.versions, ["v1", "v1beta1"]);
    assert.equal(def.storageVersion, "v1beta1");
    const now = new Date("2026-01-01T00:10:00Z");
    const obj = {
      apiVersion: "example.com/v1beta1", kind: "Thing", metadata: { name: "t", labels: { a: "b" } },
      spec: { count: 3 }, status: { since: "2026-01-01T00:05:00Z", conditions: [{ type: "Synced", status: "False" }, { type: "Ready", status: "True" }] },
    };
    assert.deepEqual(def.table!.cells(obj, now), ["t", 3, "True", '{"a":"b"}', "5m", null]);
    assert.deepEqual(def.table!.columns.map((c) => c.name), ["Name", "Count", "Ready", "Labels", "Since", "Wrong"]);
  });
});
