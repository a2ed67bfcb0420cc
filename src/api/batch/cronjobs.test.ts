import { test } from "node:test";
import assert from "node:assert/strict";
import { findSubresource } from "../subresources/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { create, update, template, NOW } from "../apps/testing.js";
import { cronjobs, isKnownTimeZone } from "./cronjobs.js";
import { batchModule } from "./index.js";
import { namingFor } from "../../machinery/naming.js";

const cron = (spec: Record<string, unknown> = {}, name = "hello") => ({
  apiVersion: "batch/v1",
  kind: "CronJob",
  metadata: { name, namespace: "default" },
  spec: {
    schedule: "*/5 * * * *",
    jobTemplate: { spec: { template: template({}, { restartPolicy: "OnFailure" }) } },
    ...spec,
  },
});
const specOf = (o: ApiObject) => o["spec"] as Record<string, unknown>;

test("cronjobs: declaration and module", () => {
  assert.deepEqual(cronjobs.shortNames, ["cj"]);
  assert.deepEqual(cronjobs.categories, ["all"]);
  assert.ok(findSubresource(cronjobs, "status"));
  assert.deepEqual(batchModule.resources(namingFor()).map((d) => d.resource), ["jobs", "cronjobs"]);
});

test("cronjobs: defaults", () => {
  const { obj, errors } = create(cronjobs, cron());
  assert.deepEqual(errors, []);
  const spec = specOf(obj);
  assert.equal(spec["concurrencyPolicy"], "Allow");
  assert.equal(spec["suspend"], false);
  assert.equal(spec["successfulJobsHistoryLimit"], 3);
  assert.equal(spec["failedJobsHistoryLimit"], 1);
  // JobSpec fields are defaulted on the Jobs it creates, not in the template.
  assert.equal((spec["jobTemplate"] as { spec: Record<string, unknown> }).spec["backoffLimit"], undefined);
  assert.deepEqual(obj["status"], {});
});

test("cronjobs: validation messages", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["no schedule", { schedule: "" }, ["spec.schedule: Required value"]],
    ["bad schedule", { schedule: "* * *" }, ['spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]']],
    ["out of range", { schedule: "0 24 * * *" }, ['spec.schedule: Invalid value: "0 24 * * *": end of range (24) above maximum (23): 24']],
    ["TZ in schedule", { schedule: "CRON_TZ=UTC 0 * * * *" }, ['spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead']],
    ["unknown zone", { timeZone: "Mars/Olympus" }, ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']],
    ["bad zone chars", { timeZone: "../etc/passwd" }, ['spec.timeZone: Invalid value: "../etc/passwd": unknown time zone ../etc/passwd']],
    ["empty zone", { timeZone: "" }, ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']],
    ["Local", { timeZone: "Local" }, ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones']],
    ["local", { timeZone: "local" }, [
      'spec.timeZone: Invalid value: "local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
      'spec.timeZone: Invalid value: "local": unknown time zone local',
    ]],
    ["policy", { concurrencyPolicy: "Sometimes" }, ['spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"']],
    ["history", { successfulJobsHistoryLimit: -1, startingDeadlineSeconds: -5 }, [
      "spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0",
      "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
    ]],
    ["job restart policy", { jobTemplate: { spec: { template: template({}) } } }, [
      'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]],
    ["template selector", { jobTemplate: { spec: { selector: { matchLabels: { a: "b" } }, manualSelector: true, template: template({ a: "b" }, { restartPolicy: "Never" }) } } }, [
      'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
      'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"',
    ]],
  ];
  for (const [name, spec, want] of cases) assert.deepEqual(create(cronjobs, cron(spec)).errors, want, name);
  for (const ok of ["@hourly", "0 3 * * mon", "@every 2h"]) assert.deepEqual(create(cronjobs, cron({ schedule: ok })).errors, [], ok);
  assert.deepEqual(create(cronjobs, cron({ timeZone: "Europe/Berlin" })).errors, []);
  assert.deepEqual(create(cronjobs, cron({}, "c".repeat(53))).errors, [`metadata.name: Invalid value: "${"c".repeat(53)}": must be no more than 52 characters`]);
});

test("cronjobs: update keeps old TZ schedules and long names editable", () => {
  const { obj: old } = create(cronjobs, cron({}, "c".repeat(60)));
  (old["spec"] as Record<string, unknown>)["schedule"] = "TZ=UTC 0 * * * *";
  const next = structuredClone(old);
  specOf(next)["suspend"] = true;
  assert.deepEqual(update(cronjobs, next, old), []);
  specOf(next)["timeZone"] = "UTC";
  assert.deepEqual(update(cronjobs, next, old), ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule']);
});

test("cronjobs: time zones are case-sensitive IANA names", () => {
  assert.ok(isKnownTimeZone("America/New_York"));
  assert.ok(isKnownTimeZone("UTC"));
  assert.ok(!isKnownTimeZone("america/new_york"));
  assert.ok(!isKnownTimeZone("Nowhere/Special"));
});

test("cronjobs: table cells", () => {
  const { obj } = create(cronjobs, cron({ timeZone: "Etc/UTC" }));
  assert.deepEqual(cronjobs.table!.columns.map((c) => c.name), [
    "Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers", "Images", "Selector",
  ]);
  assert.deepEqual(cronjobs.table!.cells(obj, NOW), ["hello", "*/5 * * * *", "Etc/UTC", "False", 0, "<none>", "4m5s", "web", "nginx:1.27", "<none>"]);
  obj["status"] = { active: [{ name: "hello-1" }], lastScheduleTime: "2026-01-02T03:04:00Z" };
  delete specOf(obj)["timeZone"];
  assert.deepEqual(cronjobs.table!.cells(obj, NOW).slice(2, 6), ["<none>", "False", 1, "5s"]);
});
