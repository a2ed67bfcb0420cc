import { test } from "node:test";
import assert from "node:assert/strict";
import { podTable } from "./pod-table.js";
import type { Pod } from "./types.js";
import { NOW } from "./testing.js";

function pod(spec: object, status: object, metadata: object = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", creationTimestamp: "2026-01-02T02:04:05Z", ...metadata },
    spec: { containers: [{ name: "web", image: "nginx" }], ...spec },
    status: status as Pod["status"],
  } as Pod;
}

const running = { running: { startedAt: "2026-01-02T02:05:00Z" } };
const cells = (p: Pod) => podTable.cells(p, NOW);

test("pod table: the columns kubectl shows, wide ones at priority 1", () => {
  assert.deepEqual(
    podTable.columns.map((c) => [c.name, c.priority]),
    [["Name", 0], ["Ready", 0], ["Status", 0], ["Restarts", 0], ["Age", 0], ["IP", 1], ["Node", 1], ["Nominated Node", 1], ["Readiness Gates", 1]],
  );
});

test("pod table: status cells for the usual lifecycles", () => {
  const cases: [string, Pod, unknown[]][] = [
    ["pending", pod({}, { phase: "Pending" }), ["web", "0/1", "Pending", "0", "60m", "<none>", "<none>", "<none>", "<none>"]],
    [
      "container creating",
      pod({ nodeName: "n1" }, { phase: "Pending", containerStatuses: [{ name: "web", ready: false, restartCount: 0, state: { waiting: { reason: "ContainerCreating" } } }] }),
      ["web", "0/1", "ContainerCreating", "0", "60m", "<none>", "n1", "<none>", "<none>"],
    ],
    [
      "running",
      pod(
        { nodeName: "n1", readinessGates: [{ conditionType: "example.com/lb" }] },
        {
          phase: "Running",
          podIPs: [{ ip: "10.1.0.7" }],
          conditions: [{ type: "Ready", status: "True" }, { type: "example.com/lb", status: "True" }],
          containerStatuses: [{ name: "web", ready: true, restartCount: 0, state: running }],
        },
      ),
      ["web", "1/1", "Running", "0", "60m", "10.1.0.7", "n1", "<none>", "1/1"],
    ],
    [
      "completed",
      pod({}, { phase: "Succeeded", containerStatuses: [{ name: "web", ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: "Completed" } } }] }),
      ["web", "0/1", "Completed", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
    [
      "crash loop, restarts with when",
      pod(
        {},
        {
          phase: "Running",
          containerStatuses: [
            {
              name: "web",
              ready: false,
              restartCount: 5,
              state: { waiting: { reason: "CrashLoopBackOff" } },
              lastState: { terminated: { exitCode: 1, reason: "Error", finishedAt: "2026-01-02T02:59:05Z" } },
            },
          ],
        },
      ),
      ["web", "0/1", "CrashLoopBackOff", "5 (5m ago)", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
    [
      "terminating",
      pod({}, { phase: "Running", containerStatuses: [{ name: "web", ready: true, restartCount: 0, state: running }] }, { deletionTimestamp: "2026-01-02T03:05:00Z" }),
      ["web", "1/1", "Terminating", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
    [
      "exit code without reason",
      pod({}, { phase: "Failed", containerStatuses: [{ name: "web", ready: false, restartCount: 0, state: { terminated: { exitCode: 137 } } }] }),
      ["web", "0/1", "ExitCode:137", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
    [
      "init containers",
      pod(
        { initContainers: [{ name: "a" }, { name: "b" }] },
        {
          phase: "Pending",
          initContainerStatuses: [
            { name: "a", ready: true, restartCount: 0, state: { terminated: { exitCode: 0, reason: "Completed" } } },
            { name: "b", ready: false, restartCount: 0, state: running },
          ],
        },
      ),
      ["web", "0/1", "Init:1/2", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
    [
      "sidecar counts in ready",
      pod(
        { initContainers: [{ name: "proxy", restartPolicy: "Always" }] },
        {
          phase: "Running",
          conditions: [{ type: "Initialized", status: "True" }],
          initContainerStatuses: [{ name: "proxy", ready: true, started: true, restartCount: 0, state: running }],
          containerStatuses: [{ name: "web", ready: true, restartCount: 0, state: running }],
        },
      ),
      ["web", "2/2", "Running", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
    [
      "scheduling gated",
      pod({ schedulingGates: [{ name: "x" }] }, { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulingGated" }] }),
      ["web", "0/1", "SchedulingGated", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
    ],
  ];
  for (const [what, p, want] of cases) assert.deepEqual(cells(p), want, what);
});
