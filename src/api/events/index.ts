// The events.<suffix> API group: Event v1, served from core events' storage.

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { eventsV1Resource } from "./events.js";
import { EVENTS_TYPES } from "./schemas.js";

export { EVENTS_TYPES, EVENTS_V1 } from "./schemas.js";
export { coreToEventsV1, eventsV1ToCore } from "./events.js";

export const eventsModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...EVENTS_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [eventsV1Resource(naming)];
  },
};

export default eventsModule;
