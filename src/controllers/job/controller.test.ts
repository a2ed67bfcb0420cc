// The Job controller against a real API server (built-in API). No node agent
// runs here: the test plays it, setting pod phases through pods/status.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import type { Job, JobSpec } from "../../api/batch/types.js";
import { MetricsRegistry } from "../../component/metrics/index.js";
import { assertExposesMetric } from "../../component/metrics/testing.js";
import type { ApiObject } from "../../machinery/index.js";
import { controllerOnTestServer, metricValue, eventually } from "../testing.js";
import { EVENTS, JOBS, PODS } from "../../api/resource-refs.js";
import { JobController } from "./controller.js";
import { formatIndexes, parseIndexes } from "./indexes.js";

test("completed indexes are written sorted with consecutive runs collapsed", () => {
  assert.equal(formatIndexes([7, 1, 3, 4, 5, 9, 10]), "1,3-5,7,9-10");
  assert.deepEqual([...parseIndexes("1,3-5,7,9-10", 10)].sort((a, b) => a - b), [1, 3, 4, 5, 7, 9]);
});


describe("job controller", () => {
  const metrics = new MetricsRegistry();
  const fixture = controllerOnTestServer((ctx) => new JobController(ctx), { extra: { metrics, config: { jobBackoffBaseMs: 20 } } });

  const createJob = (name: string, spec: JobSpec) =>
    fixture.ctx.client.create<Job>(JOBS, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, namespace: "default" },
      spec: { ...spec, template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
    });
  const getJob = (name: string) => fixture.ctx.client.get<Job>(JOBS, { namespace: "default", name });
  const podsOf = async (job: string) =>
    (await fixture.ctx.client.list<Pod>(PODS, { namespace: "default", labelSelector: { "batch.orch.io/job-name": job } })).items;
  const running_ = async (job: string) => (await podsOf(job)).filter((p) => !p.status?.phase || p.status.phase === "Pending" || p.status.phase === "Running");
  /** Plays the node agent: the pod's containers ended with this phase. */
  const finish = (pod: Pod, phase: "Succeeded" | "Failed") =>
    fixture.ctx.client.update(PODS, { ...pod, status: { ...pod.status, phase } }, { subresource: "status" });
  const condition = (job: Job, type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === "True");
  const untilCondition = (name: string, type: string) =>
    eventually(`job ${name} to be ${type}`, async () => {
      const job = await getJob(name);
      return condition(job, type) ? job : undefined;
    });

  test("NonIndexed: runs parallelism pods at a time to completions, counts each once and ends Complete", async () => {
    await createJob("nonindexed", { completions: 3, parallelism: 2 });
    let done = 0;
    while (done < 3) {
      const active = await eventually("an active pod", async () => ((await running_("nonindexed")).length > 0 ? running_("nonindexed") : undefined));
      assert.ok(active.length <= 2, `never more than parallelism pods (saw ${active.length})`);
      const pod = active[0]!;
      assert.deepEqual(pod.metadata.finalizers, ["batch.orch.io/job-tracking"]);
      assert.equal(pod.metadata.ownerReferences?.[0]?.kind, "Job");
      await finish(pod, "Succeeded");
      done++;
    }
    const job = await untilCondition("nonindexed", "Complete");
    assert.equal(condition(job, "SuccessCriteriaMet")?.reason, "CompletionsReached", "the interim condition came first");
    assert.equal(condition(job, "Complete")?.message, "Reached expected number of succeeded pods");
    assert.equal(job.status?.succeeded, 3);
    assert.equal(job.status?.active, 0);
    assert.ok(job.status?.startTime && job.status.completionTime);
    for (const pod of await podsOf("nonindexed")) assert.deepEqual(pod.metadata.finalizers ?? [], [], "finished pods are released");
    assert.equal(metricValue(metrics, "job_controller_jobs_finished_total", { completion_mode: "NonIndexed", result: "succeeded", reason: "CompletionsReached" }), 1, fixture.ctx.lines.join("\n"));
    assert.equal(metricValue(metrics, "job_controller_job_pods_finished_total", { completion_mode: "NonIndexed", result: "succeeded" }), 3);
    assert.ok(metricValue(metrics, "job_controller_job_syncs_total", { action: "pods_created", completion_mode: "NonIndexed", result: "success" }) >= 1);
    // kubectl describe job shows what happened.
    await eventually("the Job's events", async () => {
      const events = (await fixture.ctx.client.list<ApiObject & { reason?: string }>(EVENTS, { namespace: "default", fieldSelector: { "involvedObject.name": "nonindexed" } })).items;
      const reasons = events.map((e) => e.reason);
      return reasons.filter((r) => r === "SuccessfulCreate").length === 3 && reasons.includes("Completed");
    });
    // Seed 002: the stable job_controller_* metrics with exactly their labels.
    const text = metrics.expose();
    assertExposesMetric(text, { name: "job_controller_job_syncs_total", kind: "counter", labels: ["action", "completion_mode", "result"] });
    assertExposesMetric(text, { name: "job_controller_job_sync_duration_seconds", kind: "histogram", labels: ["action", "completion_mode", "result"] });
    assertExposesMetric(text, { name: "job_controller_jobs_finished_total", kind: "counter", labels: ["completion_mode", "reason", "result"] });
    assertExposesMetric(text, { name: "job_controller_job_pods_finished_total", kind: "counter", labels: ["completion_mode", "result"] });
    assert.ok(metricValue(metrics, "workqueue_adds_total", { name: "job" }) > 0, "the work queue reports workqueue_*{name=\"job\"}");
  });

  test("Indexed: one pod per index with the index annotation, label and hostname; completedIndexes", async () => {
    await createJob("indexed", { completions: 3, parallelism: 3, completionMode: "Indexed" });
    const pods = await eventually("three pods", async () => ((await running_("indexed")).length === 3 ? running_("indexed") : undefined));
    const byIndex = new Map(pods.map((p) => [p.metadata.annotations?.["batch.orch.io/job-completion-index"], p]));
    assert.deepEqual([...byIndex.keys()].sort(), ["0", "1", "2"]);
    const one = byIndex.get("1")!;
    assert.equal(one.metadata.labels?.["batch.orch.io/job-completion-index"], "1");
    assert.equal(one.spec?.hostname, "indexed-1");
    assert.match(one.metadata.name!, /^indexed-1-/);
    await finish(one, "Succeeded");
    await eventually("index 1 completed", async () => (await getJob("indexed")).status?.completedIndexes === "1");
    // A failed index is retried with a new pod for the same index.
    await finish(byIndex.get("0")!, "Failed");
    await eventually("a replacement for index 0", async () =>
      (await running_("indexed")).some((p) => p.metadata.annotations?.["batch.orch.io/job-completion-index"] === "0"),
    );
    for (const pod of await running_("indexed")) await finish(pod, "Succeeded");
    const job = await untilCondition("indexed", "Complete");
    assert.equal(job.status?.completedIndexes, "0-2");
    assert.equal(job.status?.succeeded, 3);
    assert.equal(job.status?.failed, 1);
  });

  test("backoffLimit: failures past the limit fail the Job with BackoffLimitExceeded", async () => {
    await createJob("flaky", { completions: 1, parallelism: 1, backoffLimit: 1 });
    for (let i = 0; i < 2; i++) {
      const pod = await eventually(`attempt ${i + 1}`, async () => (await running_("flaky"))[0]);
      await finish(pod, "Failed");
    }
    const job = await untilCondition("flaky", "Failed");
    assert.equal(condition(job, "FailureTarget")?.reason, "BackoffLimitExceeded");
    assert.equal(condition(job, "Failed")?.message, "Job has reached the specified backoff limit");
    assert.equal(job.status?.failed, 2);
    assert.equal((await running_("flaky")).length, 0, "no replacement after the limit");
  });

  test("adoption: an orphaned pod its selector matches is adopted again; a pod relabelled out of it is released (finalizer too) and replaced", async () => {
    const job = await createJob("adopter", { completions: 4, parallelism: 2 });
    const [a, b] = await eventually("two pods", async () => {
      const pods = await running_("adopter");
      return pods.length === 2 ? pods : undefined;
    });
    const patch = (pod: Pod, ops: unknown[]) => fixture.ctx.client.patch(PODS, { namespace: "default", name: pod.metadata.name!, type: "json", patch: ops });
    await patch(a!, [{ op: "remove", path: "/metadata/ownerReferences" }]);
    const adopted = await eventually("the orphan adopted", async () => {
      const p = await fixture.ctx.client.get<Pod>(PODS, { namespace: "default", name: a!.metadata.name! });
      return p.metadata.ownerReferences?.find((r) => r.controller)?.uid === job.metadata.uid ? p : undefined;
    });
    assert.deepEqual([adopted.metadata.ownerReferences?.[0]?.kind, adopted.metadata.ownerReferences?.[0]?.apiVersion], ["Job", "batch/v1"]);
    await patch(b!, [{ op: "replace", path: "/metadata/labels", value: { other: "x" } }]);
    const released = await eventually("the relabelled pod released", async () => {
      const p = await fixture.ctx.client.get<Pod>(PODS, { namespace: "default", name: b!.metadata.name! });
      // The controller reference goes, then (a second write) the tracking finalizer: the Job no longer counts it.
      return (p.metadata.ownerReferences ?? []).length === 0 && (p.metadata.finalizers ?? []).length === 0 ? p : undefined;
    });
    assert.deepEqual(released.metadata.labels, { other: "x" });
    await eventually("a replacement for the released pod", async () => ((await running_("adopter")).length === 2 ? true : undefined));
    assert.ok((await running_("adopter")).every((p) => p.metadata.name !== b!.metadata.name));
  });

  test("activeDeadlineSeconds: a Job running too long fails with DeadlineExceeded and its pods go", async () => {
    await createJob("slow", { completions: 1, parallelism: 1, activeDeadlineSeconds: 1 });
    await eventually("a pod", async () => (await running_("slow")).length === 1);
    const job = await untilCondition("slow", "Failed").catch((err: unknown) => {
      throw new Error(`${String(err)}\n${fixture.ctx.lines.join("\n")}`);
    });
    assert.equal(condition(job, "Failed")?.reason, "DeadlineExceeded");
    assert.equal(condition(job, "Failed")?.message, "Job was active longer than specified deadline");
    await eventually("the pod deleted", async () => (await podsOf("slow")).length === 0);
  });

  test("suspend: a suspended Job has no pods and says so; resuming starts them", async () => {
    await createJob("paused", { completions: 1, parallelism: 1, suspend: true });
    const job = await untilCondition("paused", "Suspended");
    assert.equal(condition(job, "Suspended")?.reason, "JobSuspended");
    assert.equal((await podsOf("paused")).length, 0);
    await fixture.ctx.client.patch(JOBS, { namespace: "default", name: "paused", patch: { spec: { suspend: false } } });
    await eventually("a pod after resuming", async () => (await running_("paused")).length === 1);
    // The pods are made before the status is written: wait for it.
    await eventually("Suspended False, JobResumed", async () => (await getJob("paused")).status?.conditions?.find((c) => c.type === "Suspended")?.reason === "JobResumed");
  });
  test("podFailurePolicy: FailJob on an exit code fails the Job at once; Ignore does not count the failure", async () => {
    await createJob("strict", {
      completions: 1,
      parallelism: 1,
      podFailurePolicy: {
        rules: [
          { action: "FailJob", onExitCodes: { operator: "In", values: [42] } },
          { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] },
        ],
      },
    });
    // Disrupted: ignored, replaced, not counted.
    const first = await eventually("a pod", async () => (await running_("strict"))[0]);
    await fixture.ctx.client.update(PODS, { ...first, status: { ...first.status, phase: "Failed", conditions: [{ type: "DisruptionTarget", status: "True", reason: "DeletionByTaintManager" }] } }, { subresource: "status" });
    const second = await eventually("a replacement", async () => (await running_("strict")).find((p) => p.metadata.name !== first.metadata.name));
    assert.equal((await getJob("strict")).status?.failed ?? 0, 0, "an ignored failure is not counted");
    // Exit code 42: the Job fails.
    const terminated = { name: "c", state: { terminated: { exitCode: 42, reason: "Error" } } };
    await fixture.ctx.client.update(PODS, { ...second, status: { ...second.status, phase: "Failed", containerStatuses: [terminated] } }, { subresource: "status" });
    const job = await untilCondition("strict", "Failed");
    assert.equal(condition(job, "Failed")?.reason, "PodFailurePolicy");
    assert.equal(condition(job, "Failed")?.message, `Container c for pod default/${second.metadata.name} failed with exit code 42 matching FailJob rule at index 0`);
    assert.equal(job.status?.failed, 1);
  });

  test("successPolicy: the Job succeeds once the named indexes have, and the other pods go", async () => {
    await createJob("leader", { completions: 3, parallelism: 3, completionMode: "Indexed", successPolicy: { rules: [{ succeededIndexes: "0" }] } });
    const pods = await eventually("three pods", async () => ((await running_("leader")).length === 3 ? running_("leader") : undefined));
    await finish(pods.find((p) => p.metadata.annotations?.["batch.orch.io/job-completion-index"] === "0")!, "Succeeded");
    const job = await untilCondition("leader", "Complete");
    assert.equal(condition(job, "SuccessCriteriaMet")?.reason, "SuccessPolicy");
    assert.equal(condition(job, "Complete")?.message, "Matched rules at index 0");
    assert.equal(job.status?.completedIndexes, "0");
    assert.equal((await running_("leader")).length, 0, "the other indexes' pods were deleted");
  });

  test("backoffLimitPerIndex: an index out of retries is failed, the others run on, and the Job ends Failed (FailedIndexes)", async () => {
    await createJob("per-index", { completions: 2, parallelism: 2, completionMode: "Indexed", backoffLimitPerIndex: 1 });
    const index = (p: Pod) => p.metadata.annotations?.["batch.orch.io/job-completion-index"];
    for (let attempt = 0; attempt < 2; attempt++) {
      const pod = await eventually(`index 0, attempt ${attempt + 1}`, async () => (await running_("per-index")).find((p) => index(p) === "0"));
      assert.equal(pod.metadata.annotations?.["batch.orch.io/job-index-failure-count"], String(attempt));
      await finish(pod, "Failed");
    }
    await eventually("index 0 failed", async () => (await getJob("per-index")).status?.failedIndexes === "0");
    assert.equal((await running_("per-index")).some((p) => index(p) === "0"), false, "no third attempt");
    await finish((await running_("per-index")).find((p) => index(p) === "1")!, "Succeeded");
    const job = await untilCondition("per-index", "Failed");
    assert.equal(condition(job, "Failed")?.reason, "FailedIndexes");
    assert.equal(condition(job, "Failed")?.message, "Job has failed indexes");
    assert.equal(job.status?.completedIndexes, "1");
  });
});
