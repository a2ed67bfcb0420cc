// The NamespaceLifecycle admission plugin: nothing is created in a namespace
// that does not exist or is terminating (upstream's plugin of that name,
// with its messages). As upstream's, it runs in the mutating phase (it changes
// nothing), so it answers before validation does. It reads namespaces through a lookup the server passes in.

import { forbidden, isApiError, notFound, type ApiObject } from "../../machinery/index.js";
import type { MutatingPlugin } from "../../api/admission.js";

export function namespaceLifecycle(lookup: (namespace: string) => Promise<ApiObject>): MutatingPlugin {
  return {
    name: "NamespaceLifecycle",
    handles: (a) => a.operation === "CREATE" && a.namespace !== undefined && a.resource.resource !== "namespaces",
    async admit(a) {
      const namespace = a.namespace ?? "";
      let ns: ApiObject;
      try {
        ns = await lookup(namespace);
      } catch (err) {
        if (isApiError(err, "NotFound")) throw notFound({ group: "", resource: "namespaces" }, namespace);
        throw err;
      }
      if (ns.metadata.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === "Terminating") {
        throw forbidden({ group: "", resource: "namespaces" }, namespace, `unable to create new content in namespace ${namespace} because it is being terminated`);
      }
    },
  };
}
