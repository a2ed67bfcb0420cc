// A small API group module for testing the server machinery on its own:
// cluster-scoped `namespaces` and namespaced `widgets` (group
// samples.orch.io) with a status subresource, a finalizer-friendly shape,
// a field selector and a table. The real built-in types live in src/api/.

import type { ApiGroupModule, ResourceDefinition, Subresource } from "../../api/resource.js";
import { defineResource } from "../../api/resource.js";
import { f, s, type } from "../../machinery/schema.js";
import { registerMetaSchemas } from "../../api/meta/schemas.js";
import { finalize, scale, status } from "../../api/subresources/index.js";
import { field, type ApiObject } from "../../machinery/index.js";

interface Widget extends ApiObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string };
}

const META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

export const sampleApi: ApiGroupModule = {
  registerSchemas(registry) {
    registerMetaSchemas(registry);
    registry.add(
      type("io.orch.samples.v1.Widget", "A widget.", {
        apiVersion: f(0, s.string(), "API version."),
        kind: f(0, s.string(), "Kind."),
        metadata: f(1, s.ref(META), "Metadata."),
        spec: f(2, s.ref("io.orch.samples.v1.WidgetSpec"), "What the widget should be."),
        status: f(3, s.map(s.any()), "What the widget is."),
      }),
      type("io.orch.samples.v1.WidgetSpec", "Widget spec.", {
        size: f(1, s.int32(), "Size of the widget.", { default: 1 }),
        color: f(2, s.string(), "Color of the widget."),
      }),
      type("io.orch.samples.v1.Namespace", "A namespace.", {
        apiVersion: f(0, s.string(), "API version."),
        kind: f(0, s.string(), "Kind."),
        metadata: f(1, s.ref(META), "Metadata."),
        spec: f(2, s.map(s.any()), "Finalizers."),
        status: f(3, s.map(s.any()), "Phase."),
      }),
    );
  },
  resources(): ResourceDefinition[] {
    return [
      defineResource({
        group: "",
        versions: ["v1"],
        resource: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        shortNames: ["ns"],
        schema: "io.orch.samples.v1.Namespace",
        nameRule: "label",
        subresources: [finalize()],
        pendingFinalizers: (ns) => ((ns as { spec?: { finalizers?: string[] } }).spec?.finalizers ?? []),
        prepareForDelete: (ns) => {
          (ns as { status?: unknown }).status = { phase: "Terminating" };
        },
      }),
      defineResource<Widget>({
        group: "samples.orch.io",
        versions: ["v1", "v1beta1"],
        resource: "widgets",
        singular: "widget",
        // Stands for a custom resource: no Protobuf form (seed 000, "Media types" 2), no strategic merge.
        protobuf: false,
        strategicMerge: false,
        kind: "Widget",
        namespaced: true,
        shortNames: ["wd"],
        categories: ["all"],
        schema: "io.orch.samples.v1.Widget",
        subresources: [
          scale({
            specReplicas: (w) => w.spec?.size ?? 0,
            setSpecReplicas: (w, n) => {
              w.spec = { ...w.spec, size: n };
            },
            statusReplicas: (w) => Number((w.status as { size?: number } | undefined)?.size ?? 0),
            selector: (w) => `widget=${w.metadata.name}`,
          }),
          status(),
        ],
        validate: (w) => ((w.spec?.size ?? 0) < 0 ? [field.invalid("spec.size", w.spec?.size, "must be greater than or equal to 0")] : []),
        fieldSelectors: { "spec.color": (w) => w.spec?.color ?? "" },
        table: {
          columns: [
            { name: "Name", type: "string", format: "name", description: "Name", priority: 0 },
            { name: "Color", type: "string", description: "Color", priority: 0 },
            { name: "Size", type: "integer", description: "Size", priority: 0 },
          ],
          cells: (w) => [w.metadata.name ?? "", w.spec?.color ?? "<none>", w.spec?.size ?? 0],
        },
      }),
    ];
  },
};

/**
 * The sample API with `widgetSubresources` listed after the widgets' own, as
 * the kind's declaration would list them (tests of subresource declarations).
 */
export function sampleApiWith(extra: { widgetSubresources: readonly Subresource[] }): ApiGroupModule {
  return {
    registerSchemas: (registry) => sampleApi.registerSchemas(registry),
    resources: (naming) =>
      sampleApi.resources(naming).map((d) => (d.resource === "widgets" ? { ...d, subresources: [...(d.subresources ?? []), ...extra.widgetSubresources] } : d)),
  };
}
