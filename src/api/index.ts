// The built-in API: every group module the API server serves by default.
import type { ApiGroupModule } from "./resource.js";
import { appsModule } from "./apps/index.js";
import { autoscalingModule } from "./autoscaling/index.js";
import { batchModule } from "./batch/index.js";
import { coordinationModule } from "./coordination/index.js";

export function builtinModules(): ApiGroupModule[] {
  return [appsModule, batchModule, autoscalingModule, coordinationModule];
}
