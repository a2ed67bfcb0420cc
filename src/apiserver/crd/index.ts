// Custom resources in the API server: the CustomResourceDefinition loop that
// serves, renames and removes custom kinds (./controller.ts).

import type { Naming } from "../../machinery/naming.js";
import type { ApiRegistry } from "../api-registry.js";
import type { Stores } from "../storage-factory.js";
import type { ServiceResolver } from "../admission/webhooks/call.js";
import { CrdController, type ServedApiDocuments } from "./controller.js";

export { CrdController, type CrdControllerOptions, type ServedApiDocuments } from "./controller.js";

/** Start the loop when CustomResourceDefinitions are served (their group module is in the server's modules). */
export async function startCrdController(o: { registry: ApiRegistry; stores: Stores; documents: readonly ServedApiDocuments[]; naming: Naming; log: (line: string) => void; resolveService?: ServiceResolver }): Promise<CrdController | undefined> {
  const crds = o.stores.for({ group: o.naming.apiextensionsGroup, resource: "customresourcedefinitions" });
  if (crds === undefined) return undefined;
  const controller = new CrdController({ crds, registry: o.registry, stores: o.stores, documents: o.documents, naming: o.naming, log: o.log, ...(o.resolveService ? { resolveService: o.resolveService } : {}) });
  await controller.start();
  return controller;
}
