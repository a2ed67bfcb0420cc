// The TTL-after-finished controller against a real API server, with an
// injected clock: a finished Job is deleted ttlSecondsAfterFinished after it
// finished, not before; Jobs without a TTL or not finished stay.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import type { Job } from "../../api/batch/types.js";
import { formatTimestamp } from "../../machinery/index.js";
import { controllerContext, deletingOrGone, type TestContext } from "../testing.js";
import { JOBS } from "../../api/resource-refs.js";
import { TtlAfterFinishedController } from "./controller.js";

describe("ttl-after-finished controller", () => {
  let t: TestServer;
  let ctx: TestContext;
  let clock = 0;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t, { now: () => clock });
  });
  after(async () => {
    await ctx.stop();
    await t.close();
  });

  const job = async (name: string, ttl: number | undefined, finishedAt: number | undefined) => {
    const made = await ctx.client.create<Job>(JOBS, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, namespace: "default" },
      spec: { ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}), template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
    });
    if (finishedAt === undefined) return;
    const at = formatTimestamp(new Date(finishedAt));
    const conditions = [
      { type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached", message: "", lastTransitionTime: at },
      { type: "Complete", status: "True", reason: "CompletionsReached", message: "", lastTransitionTime: at },
    ];
    await ctx.client.update(JOBS, { ...made, status: { startTime: at, completionTime: at, succeeded: 1, conditions } }, { subresource: "status" });
  };
  const deleting = (name: string) => deletingOrGone(ctx, JOBS, "default", name);

  test("deleted once the TTL after finishing has passed, not before", async () => {
    const finished = Date.parse("2026-01-01T00:00:00Z");
    await job("short-lived", 60, finished);
    const controller = new TtlAfterFinishedController(ctx);
    clock = finished + 30_000;
    assert.deepEqual(await controller.sync("default/short-lived"), { requeueAfterMs: 30_000 });
    assert.equal(await deleting("short-lived"), false);
    clock = finished + 60_000;
    await controller.sync("default/short-lived");
    assert.equal(await deleting("short-lived"), true);
  });

  test("Jobs without a TTL, or not finished, are left alone", async () => {
    const controller = new TtlAfterFinishedController(ctx);
    clock = Date.parse("2030-01-01T00:00:00Z");
    await job("forever", undefined, Date.parse("2026-01-01T00:00:00Z"));
    await job("running", 0, undefined);
    for (const name of ["forever", "running"]) {
      assert.equal(await controller.sync(`default/${name}`), undefined);
      assert.equal(await deleting(name), false, name);
    }
  });
});
