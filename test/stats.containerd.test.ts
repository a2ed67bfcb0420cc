// The node agent's statistics endpoints on a real containerd (Debian 1.6,
// runc): /stats/summary, /metrics/resource, the container metrics with
// pressure and /metrics/probes for a busybox pod, through the same CRI calls
// as on the embedded runtime. Skips with a reason where containerd cannot run.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../src/nodeagent/index.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { unifiedRoot } from "../src/nodeagent/stats/host-stats.js";
import { serveContainerdAgent, type ServedContainerdAgent } from "./support/containerd-agent.js";
import { containerdSkipReason } from "./support/containerd.js";

const skip = containerdSkipReason();
const NODE = "node-ctrd-stats";
let served: ServedContainerdAgent;
let agent: NodeAgent;
let root: string;
let base: string;

before(async () => {
  if (skip) return;
  served = await serveContainerdAgent(NODE, (a, req, res, url) => a.serveStats(req, res, url));
  ({ agent, root, base } = served);
});

after(async () => {
  if (!skip) await served?.stop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const text = async (path: string): Promise<string> => (await fetch(base + path)).text();

test("containerd: summary, resource metrics, container metrics with pressure, probe metrics", { skip }, async () => {
  writeFileSync(join(root, "manifests", "busy.json"), JSON.stringify({
    apiVersion: "v1", kind: "Pod", metadata: { name: "busy" },
    spec: { terminationGracePeriodSeconds: 1, containers: [{
      name: "main", image: "busybox", imagePullPolicy: "IfNotPresent",
      command: ["sh", "-c", "while true; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.2; done"],
      readinessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
    }] },
  }));
  const pod = await eventually(async () => {
    const doc = JSON.parse(await text("/stats/summary")) as Json;
    const p = (doc["pods"] as Json[]).find((x) => x["podRef"].name === `busy-${NODE}`);
    return p?.containers?.[0]?.cpu?.usageCoreNanoSeconds > 0 && p?.containers?.[0]?.memory?.workingSetBytes > 0 ? p : undefined;
  }, 60_000, "the pod's stats from containerd");
  const c = pod["containers"][0] as Json;
  assert.equal(c["name"], "main");
  assert.ok(pod["cpu"].usageCoreNanoSeconds > 0);
  if (unifiedRoot() !== undefined) assert.ok(c["cpu"].psi?.some !== undefined, `runc puts the container in a cgroup v2 group too: ${JSON.stringify(c["cpu"])}`);
  const resource = await text("/metrics/resource");
  assert.match(resource, new RegExp(`^container_cpu_usage_seconds_total\\{container="main",namespace="default",pod="busy-${NODE}"\\} `, "m"));
  assert.match(resource, /^resource_scrape_error 0 /m);
  const cadvisor = await text("/metrics/cadvisor");
  assert.match(cadvisor, new RegExp(`^container_memory_working_set_bytes\\{container="main",id="[0-9a-f]+",image="[^"]*busybox[^"]*",name="[0-9a-f]+",namespace="default",pod="busy-${NODE}"\\} `, "m"));
  if (unifiedRoot() !== undefined) assert.match(cadvisor, /^container_pressure_cpu_waiting_seconds_total\{container="main",/m);
  const probes = await eventually(async () => {
    const t = await text("/metrics/probes");
    return /prober_probe_total\{probe_type="Readiness",result="successful",container="main"/.test(t) ? t : undefined;
  }, 20_000, "a counted probe");
  assert.match(probes, /prober_probe_duration_seconds_count\{probe_type="Readiness",container="main"/);
});
