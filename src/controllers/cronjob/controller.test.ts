// The CronJob controller against a real API server, driven by an injected
// clock (a per-minute schedule is too slow to wait for), and its schedule
// arithmetic. Jobs are marked finished by the test (no job controller runs).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { parseCronSchedule } from "../../api/batch/cron.js";
import type { CronJob, CronJobSpec, Job } from "../../api/batch/types.js";
import { formatTimestamp, isApiError, parseTimestamp } from "../../machinery/index.js";
import { MetricsRegistry } from "../../component/metrics/index.js";
import { assertExposesMetric } from "../../component/metrics/testing.js";
import { controllerContext, metricValue, type TestContext } from "../testing.js";
import { CRONJOBS, JOBS } from "../../api/resource-refs.js";
import { CronJobController } from "./controller.js";
import { mostRecentRun, nextRunAfter } from "./schedule.js";

const at = (iso: string) => Date.parse(iso);

describe("cron schedule arithmetic", () => {
  test("next run: steps, day-of-month OR day-of-week, time zones, @every", () => {
    const every5 = parseCronSchedule("*/5 * * * *");
    assert.equal(nextRunAfter(every5, at("2026-01-01T10:02:30Z")), at("2026-01-01T10:05:00Z"));
    assert.equal(nextRunAfter(every5, at("2026-01-01T10:05:00Z")), at("2026-01-01T10:10:00Z"), "strictly after");
    // The 13th or any Friday (both restricted: ORed, as cron does).
    const friday13 = parseCronSchedule("0 0 13 * 5");
    assert.equal(nextRunAfter(friday13, at("2026-01-01T00:00:00Z")), at("2026-01-02T00:00:00Z"), "Friday 2 January");
    assert.equal(nextRunAfter(parseCronSchedule("0 0 13 * *"), at("2026-01-01T00:00:00Z")), at("2026-01-13T00:00:00Z"));
    // 09:00 in New York is 14:00 UTC in winter and 13:00 UTC in summer.
    const nine = parseCronSchedule("0 9 * * *");
    assert.equal(nextRunAfter(nine, at("2026-01-10T00:00:00Z"), "America/New_York"), at("2026-01-10T14:00:00Z"));
    assert.equal(nextRunAfter(nine, at("2026-07-10T00:00:00Z"), "America/New_York"), at("2026-07-10T13:00:00Z"));
    assert.equal(nextRunAfter(parseCronSchedule("@every 2s"), at("2026-01-01T00:00:00.500Z")), at("2026-01-01T00:00:02Z"));
    assert.equal(nextRunAfter(parseCronSchedule("0 0 30 2 *"), at("2026-01-01T00:00:00Z")), undefined, "30 February never comes");
  });

  test("most recent run: the latest due time and how many were missed", () => {
    const hourly = parseCronSchedule("@hourly");
    assert.deepEqual(mostRecentRun(hourly, at("2026-01-01T00:30:00Z"), at("2026-01-01T03:10:00Z")), { time: at("2026-01-01T03:00:00Z"), missed: 3 });
    assert.deepEqual(mostRecentRun(hourly, at("2026-01-01T00:30:00Z"), at("2026-01-01T00:50:00Z")), { missed: 0 });
  });
});

describe("cronjob controller", () => {
  let t: TestServer;
  let ctx: TestContext;
  let clock = 0;
  let controller: CronJobController;
  const metrics = new MetricsRegistry();

  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t, { metrics, now: () => clock });
    controller = new CronJobController(ctx);
  });
  after(async () => {
    await ctx.stop();
    await t.close();
  });

  const create = async (name: string, spec: Partial<CronJobSpec>) => {
    const cj = await ctx.client.create<CronJob>(CRONJOBS, {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name, namespace: "default" },
      spec: {
        schedule: "*/5 * * * *",
        ...spec,
        jobTemplate: { metadata: { labels: { from: name } }, spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } } },
      },
    });
    return parseTimestamp(cj.metadata.creationTimestamp!).getTime();
  };
  const jobsOf = async (name: string) =>
    (await ctx.client.list<Job>(JOBS, { namespace: "default", labelSelector: { from: name } })).items.filter((j) => !j.metadata.deletionTimestamp);
  const cronjob = (name: string) => ctx.client.get<CronJob>(CRONJOBS, { namespace: "default", name });
  // The first five-minute mark after `ms`.
  const mark = (ms: number) => nextRunAfter(parseCronSchedule("*/5 * * * *"), ms)!;
  const complete = async (job: Job, type: "Complete" | "Failed") => {
    const now = formatTimestamp(new Date(clock));
    const conditions =
      type === "Complete"
        ? [
            { type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached", message: "", lastTransitionTime: now },
            { type: "Complete", status: "True", reason: "CompletionsReached", message: "", lastTransitionTime: now },
          ]
        : [
            { type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded", message: "", lastTransitionTime: now },
            { type: "Failed", status: "True", reason: "BackoffLimitExceeded", message: "", lastTransitionTime: now },
          ];
    await ctx.client.update(JOBS, { ...job, status: { startTime: now, ...(type === "Complete" ? { completionTime: now, succeeded: 1 } : { failed: 1 }), conditions } }, { subresource: "status" });
  };

  test("a due schedule creates <name>-<minutes> from the template and records lastScheduleTime and the skew", async () => {
    const created = await create("tick", {});
    const first = mark(created);
    clock = first - 1000;
    const early = await controller.sync("default/tick");
    assert.equal((await jobsOf("tick")).length, 0, "nothing before the first time");
    assert.ok(early?.requeueAfterMs !== undefined && early.requeueAfterMs <= 2000, "looks again when it is due");
    clock = first + 3000;
    await controller.sync("default/tick");
    const jobs = await jobsOf("tick");
    assert.deepEqual(jobs.map((j) => j.metadata.name), [`tick-${first / 60_000}`]);
    assert.equal(jobs[0]!.metadata.ownerReferences?.[0]?.kind, "CronJob");
    assert.equal(jobs[0]!.metadata.annotations?.["batch.orch.io/cronjob-scheduled-timestamp"], formatTimestamp(new Date(first)));
    const status = (await cronjob("tick")).status!;
    assert.equal(status.lastScheduleTime, formatTimestamp(new Date(first)));
    assert.deepEqual(status.active?.map((r) => r.name), [`tick-${first / 60_000}`]);
    assert.equal(metricValue(metrics, "cronjob_controller_job_creation_skew_duration_seconds_count", {}), 1);
    assertExposesMetric(metrics.expose(), { name: "cronjob_controller_job_creation_skew_duration_seconds", kind: "histogram", labels: [] });
    await controller.sync("default/tick");
    assert.equal((await jobsOf("tick")).length, 1, "one job per scheduled time");
  });

  test("Forbid skips a run while one is active; Replace replaces it; Allow runs both", async () => {
    for (const policy of ["Forbid", "Replace", "Allow"]) {
      const name = `policy-${policy.toLowerCase()}`;
      const first = mark(await create(name, { concurrencyPolicy: policy }));
      clock = first + 1000;
      await controller.sync(`default/${name}`);
      clock = first + 5 * 60_000 + 1000;
      await controller.sync(`default/${name}`);
      const names = (await jobsOf(name)).map((j) => j.metadata.name).sort();
      const second = `${name}-${first / 60_000 + 5}`;
      const expected = { Forbid: [`${name}-${first / 60_000}`], Replace: [second], Allow: [`${name}-${first / 60_000}`, second] }[policy];
      assert.deepEqual(names, expected, policy);
    }
  });

  test("startingDeadlineSeconds: a run missed by more than the deadline is skipped", async () => {
    const first = mark(await create("late", { startingDeadlineSeconds: 10 }));
    clock = first + 60_000;
    await controller.sync("default/late");
    assert.equal((await jobsOf("late")).length, 0);
    assert.equal((await cronjob("late")).status?.lastScheduleTime, undefined);
  });

  test("suspend: no runs while suspended", async () => {
    const first = mark(await create("sleepy", { suspend: true }));
    clock = first + 1000;
    await controller.sync("default/sleepy");
    assert.equal((await jobsOf("sleepy")).length, 0);
  });

  test("finished jobs leave the active list, set lastSuccessfulTime, and are pruned to the history limits", async () => {
    const first = mark(await create("history", { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }));
    for (let i = 0; i < 3; i++) {
      clock = first + i * 5 * 60_000 + 1000;
      await controller.sync("default/history");
      const job = (await jobsOf("history")).find((j) => j.metadata.name === `history-${first / 60_000 + i * 5}`)!;
      await complete(job, i === 1 ? "Failed" : "Complete");
    }
    clock += 1000;
    await controller.sync("default/history");
    const left = (await jobsOf("history")).map((j) => j.metadata.name).sort();
    assert.deepEqual(left, [`history-${first / 60_000 + 10}`, `history-${first / 60_000 + 5}`].sort(), "the newest success and the newest failure");
    const status = (await cronjob("history")).status!;
    assert.deepEqual(status.active ?? [], []);
    assert.ok(status.lastSuccessfulTime);
    const gone = await ctx.client.get(JOBS, { namespace: "default", name: `history-${first / 60_000}` }).catch((err: unknown) => err);
    assert.ok(isApiError(gone, "NotFound") || !!(gone as Job).metadata?.deletionTimestamp);
  });
});
