// The built-in API: every group module the API server serves by default.
import type { ApiGroupModule } from "./resource.js";
import { appsModule } from "./apps/index.js";
import { batchModule } from "./batch/index.js";

export function builtinModules(): ApiGroupModule[] {
  return [appsModule, batchModule];
}
