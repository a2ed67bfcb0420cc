// The well-known labels of EndpointSlices: the controller that writes slices
// sets them, and the proxy and cluster DNS select slices by them, so they are
// part of the discovery API rather than of any one of those programs.

import type { Naming } from "../../machinery/naming.js";

export interface EndpointSliceLabels {
  /** `<domain>/service-name`: the Service a slice belongs to. */
  readonly serviceName: string;
  /** `endpointslice.<domain>/managed-by`: who maintains a slice. */
  readonly managedBy: string;
  /** The managed-by value of the endpointslice controller's own slices. */
  readonly controllerName: string;
}

export function endpointSliceLabels(naming: Naming): EndpointSliceLabels {
  const d = naming.keyDomain;
  return { serviceName: `${d}/service-name`, managedBy: `endpointslice.${d}/managed-by`, controllerName: `endpointslice-controller.${naming.groupSuffix}` };
}
