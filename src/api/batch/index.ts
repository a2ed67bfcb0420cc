// The batch/v1 API group: Jobs and CronJobs. Registers only batch's own
// types; PodTemplateSpec, ObjectReference and the meta types come from theirs.

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { cronjobs } from "./cronjobs.js";
import { jobs } from "./jobs.js";
import { BATCH_TYPES } from "./schemas.js";

export { BATCH_TYPES, BATCH_V1 } from "./schemas.js";
export { parseCronSchedule, CronParseError } from "./cron.js";
export type { CronSchedule } from "./cron.js";
export type { Job, CronJob, JobSpec, CronJobSpec } from "./types.js";

export const batchModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...BATCH_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [jobs(naming), cronjobs];
  },
};

export default batchModule;
