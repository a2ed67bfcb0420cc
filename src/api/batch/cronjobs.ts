// cronjobs (batch/v1): defaults (Allow, not suspended, keep 3 successful and
// 1 failed Job), validation (the schedule must parse, the time zone must be a
// real IANA zone, the job template is a JobSpec without a selector, names
// leave room for the 11-character suffix of the Jobs), and `kubectl get` columns.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { formatAge } from "../table-format.js";
import { formatLabelSelector, nonnegative, workloadTable } from "../apps/workload.js";
import { CronParseError, parseCronSchedule } from "./cron.js";
import { defaultPodTemplateOfJobTemplate, validateJobTemplate } from "./job-spec.js";
import { BATCH_V1 } from "./schemas.js";
import type { CronJob, CronJobSpec } from "./types.js";

/** 63 (a DNS label) minus the `-<minutes since epoch>` suffix of the Jobs a CronJob creates. */
const MAX_NAME_LENGTH = 52;

export function defaultCronJob(obj: CronJob): void {
  const spec = (obj.spec ??= {});
  if (!spec.concurrencyPolicy) spec.concurrencyPolicy = "Allow";
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  defaultPodTemplateOfJobTemplate((spec.jobTemplate ??= {}));
}

function validateSchedule(schedule: string, allowTZ: boolean, timeZone: string | null | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  try {
    parseCronSchedule(schedule);
  } catch (err) {
    if (!(err instanceof CronParseError)) throw err;
    errs.push(field.invalid(path, schedule, err.message));
  }
  const hasTZ = schedule.includes("TZ");
  if (allowTZ && hasTZ && timeZone != null) errs.push(field.invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"));
  else if (!allowTZ && hasTZ) errs.push(field.invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"));
  return errs;
}

const TZ_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** Whether the IANA database knows `name` (Go's time.LoadLocation; names are case-sensitive). */
export function isKnownTimeZone(name: string): boolean {
  // Go's LoadLocation answers these two without the database ("Local" is rejected separately).
  if (name === "UTC" || name === "Local") return true;
  try {
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    // Intl ignores case; the zone files it stands in for do not.
    return !(resolved.toLowerCase() === name.toLowerCase() && resolved !== name);
  } catch {
    return false;
  }
}

export function validateTimeZone(tz: string | null | undefined, path: string): FieldError[] {
  if (tz == null) return [];
  if (tz === "") return [field.invalid(path, tz, "timeZone must be nil or non-empty string")];
  for (const part of tz.split("/")) {
    if (part === "." || part === ".." || part.startsWith("-") || !TZ_PART.test(part)) return [field.invalid(path, tz, `unknown time zone ${tz}`)];
  }
  const errs: FieldError[] = [];
  if (tz.toLowerCase() === "local") errs.push(field.invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"));
  if (!isKnownTimeZone(tz)) errs.push(field.invalid(path, tz, `unknown time zone ${tz}`));
  return errs;
}

export function validateCronJobSpec(spec: CronJobSpec, old: CronJobSpec | undefined, path = "spec"): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec.schedule) errs.push(field.required(`${path}.schedule`, ""));
  // A schedule that already used TZ= stays updatable; new ones must use timeZone.
  else errs.push(...validateSchedule(spec.schedule, old?.schedule?.includes("TZ") ?? false, spec.timeZone, `${path}.schedule`));
  errs.push(...nonnegative(spec.startingDeadlineSeconds, `${path}.startingDeadlineSeconds`));
  if (old === undefined || old.timeZone !== spec.timeZone) errs.push(...validateTimeZone(spec.timeZone, `${path}.timeZone`));
  const policy = spec.concurrencyPolicy ?? "";
  if (policy === "") errs.push(field.required(`${path}.concurrencyPolicy`, ""));
  else if (!["Allow", "Forbid", "Replace"].includes(policy)) errs.push(field.notSupported(`${path}.concurrencyPolicy`, policy, ["Allow", "Forbid", "Replace"]));
  errs.push(...validateJobTemplate(spec.jobTemplate ?? {}, `${path}.jobTemplate`));
  errs.push(...nonnegative(spec.successfulJobsHistoryLimit, `${path}.successfulJobsHistoryLimit`));
  errs.push(...nonnegative(spec.failedJobsHistoryLimit, `${path}.failedJobsHistoryLimit`));
  return errs;
}

export function validateCronJob(obj: CronJob): FieldError[] {
  const errs = validateCronJobSpec(obj.spec ?? {}, undefined);
  const name = obj.metadata.name ?? "";
  if (name.length > MAX_NAME_LENGTH) errs.push(field.invalid("metadata.name", name, `must be no more than ${MAX_NAME_LENGTH} characters`));
  return errs;
}

export const cronjobs: ResourceDefinition = defineResource<CronJob>({
  group: "batch",
  versions: ["v1"],
  resource: "cronjobs",
  singular: "cronjob",
  kind: "CronJob",
  namespaced: true,
  shortNames: ["cj"],
  categories: ["all"],
  schema: `${BATCH_V1}.CronJob`,
  subresources: [status()],
  defaults: defaultCronJob,
  prepareForCreate(obj) {
    obj.status = {};
  },
  validate: validateCronJob,
  // The name limit is not re-checked on update, so older, longer names stay editable and deletable.
  validateUpdate: (obj, old) => validateCronJobSpec(obj.spec ?? {}, old.spec ?? {}),
  table: workloadTable<CronJob>(
    {
      columns: [
        { name: "Schedule", type: "string", description: "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.", priority: 0 },
        { name: "Timezone", type: "string", description: "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.", priority: 0 },
        { name: "Suspend", type: "boolean", description: "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.", priority: 0 },
        { name: "Active", type: "integer", description: "A list of pointers to currently running jobs.", priority: 0 },
        { name: "Last Schedule", type: "string", description: "Information when was the last time the job was successfully scheduled.", priority: 0 },
      ],
      cells(obj, now) {
        const spec = obj.spec ?? {};
        const last = obj.status?.lastScheduleTime;
        return [
          spec.schedule ?? "",
          spec.timeZone ?? "<none>",
          spec.suspend == null ? "<unset>" : spec.suspend ? "True" : "False",
          (obj.status?.active ?? []).length,
          last ? formatAge(last, now) : "<none>",
        ];
      },
    },
    // The Jobs' pods: the job template's pod template and selector.
    { template: (obj) => obj.spec?.jobTemplate?.spec?.template, selector: (obj) => formatLabelSelector(obj.spec?.jobTemplate?.spec?.selector) },
  ),
});
