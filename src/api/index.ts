// The built-in API: every group module the API server serves by default.
// core registers the meta and core types the other groups refer to, so it goes first.
import type { ApiGroupModule } from "./resource.js";
import { admissionregistrationModule } from "./admissionregistration/index.js";
import { apiextensionsModule } from "./apiextensions/index.js";
import { apiregistrationModule } from "./apiregistration/index.js";
import { appsModule } from "./apps/index.js";
import { authenticationModule } from "./authentication/index.js";
import { authorizationModule } from "./authorization/index.js";
import { autoscalingModule } from "./autoscaling/index.js";
import { batchModule } from "./batch/index.js";
import { certificatesModule } from "./certificates/index.js";
import { coordinationModule } from "./coordination/index.js";
import { coreModule } from "./core/index.js";
import { eventsModule } from "./events/index.js";
import { discoveryModule } from "./discovery/index.js";
import { flowcontrolModule } from "./flowcontrol/index.js";
import { metricsModule } from "./metrics/index.js";
import { networkingModule } from "./networking/index.js";
import { nodeModule } from "./node/index.js";
import { policyModule } from "./policy/index.js";
import { rbacModule } from "./rbac/index.js";
import { schedulingModule } from "./scheduling/index.js";
import { storageModule } from "./storage/index.js";

export function builtinModules(): ApiGroupModule[] {
  return [coreModule, appsModule, batchModule, autoscalingModule, coordinationModule, discoveryModule, schedulingModule, policyModule, rbacModule, storageModule, certificatesModule, apiextensionsModule, authenticationModule, authorizationModule, admissionregistrationModule, networkingModule, nodeModule, flowcontrolModule, eventsModule, metricsModule, apiregistrationModule];
}
