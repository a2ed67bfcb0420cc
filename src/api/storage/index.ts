// The storage.<suffix> API group: StorageClasses, CSIDrivers, CSINodes,
// VolumeAttachments (v1) and CSIStorageCapacities (v1 and v1beta1).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { csiDrivers, csiNodes, csiStorageCapacities } from "./csi.js";
import { STORAGE_TYPES } from "./schemas.js";
import { storageClasses } from "./storage-classes.js";
import { volumeAttachments } from "./volume-attachments.js";

export { STORAGE_TYPES, STORAGE_V1 } from "./schemas.js";
export { isDefaultClass } from "./storage-classes.js";
export type * from "./types.js";

export const storageModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...STORAGE_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [storageClasses(naming), csiDrivers(naming), csiNodes(naming), volumeAttachments(naming), csiStorageCapacities(naming)];
  },
};

export default storageModule;
