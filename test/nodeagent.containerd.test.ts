// The node agent on a real containerd (Debian 1.6, runc, CNI) with busybox
// pods from static manifests: running with logs, restart back-off, liveness
// and readiness probes, termination with grace (SIGTERM reaches the
// container), and a missing Localhost seccomp profile → CreateContainerError.
// Skips with a reason where containerd cannot run (fails under CI=true).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PodStatus } from "../src/api/core/types.js";
import type { NodeAgent } from "../src/nodeagent/index.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { startContainerdAgent } from "./support/containerd-agent.js";
import { containerdSkipReason, startContainerd, type Containerd } from "./support/containerd.js";

const skip = containerdSkipReason();
const NODE = "node-ctrd";
let containerd: Containerd;
let agent: NodeAgent;
let root: string;
const logs: string[] = [];

const pod = (name: string, spec: object) =>
  JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { terminationGracePeriodSeconds: 5, ...spec } });
const busybox = (name: string, script: string, extra: object = {}) => ({ name, image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sh", "-c", script], ...extra });

function statusOf(name: string): PodStatus | undefined {
  return agent.pods().find((p) => p.pod.metadata.name === `${name}-${NODE}`)?.status;
}

before(async () => {
  if (skip) return;
  root = mkdtempSync(join(tmpdir(), "nodeagent-ctrd-"));
  containerd = await startContainerd();
  agent = await startContainerdAgent(containerd, root, NODE, {
    tuning: { crashLoopBackOff: { initialMs: 1_000, maxMs: 4_000 } },
    log: (l) => logs.push(l),
  });
});

after(async () => {
  if (skip) return;
  if (process.env["NODEAGENT_TEST_LOGS"]) console.error(logs.join("\n"));
  await agent?.stop();
  await containerd?.stop();
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

test("containerd: a busybox pod runs, becomes ready through an exec probe, and writes CRI logs", { skip }, async () => {
  writeFileSync(join(root, "manifests", "web.json"), pod("web", {
    containers: [busybox("main", "echo hello from containerd; touch /tmp/ready; exec sleep 3600", { readinessProbe: { exec: { command: ["cat", "/tmp/ready"] }, periodSeconds: 1 } })],
  }));
  const s = await eventually(() => { const st = statusOf("web"); return st?.phase === "Running" && st.containerStatuses?.[0]?.ready ? st : undefined; }, 30_000, "web running and ready");
  assert.match(String((s.containerStatuses![0] as { containerID?: string }).containerID), /^containerd:\/\//);
  const uid = agent.pods().find((p) => p.pod.metadata.name === `web-${NODE}`)!.pod.metadata.uid;
  const log = await eventually(() => { try { const t = readFileSync(join(root, "logs", `default_web-${NODE}_${uid}`, "main", "0.log"), "utf8"); return t.includes("hello") ? t : undefined; } catch { return undefined; } }, 10_000, "the log");
  // The CRI log format: time, stream, tag, message.
  assert.match(log, /^\S+ stdout F hello from containerd$/m);
});

test("containerd: a crashing container restarts with back-off (CrashLoopBackOff, restart count, last state)", { skip }, async () => {
  writeFileSync(join(root, "manifests", "crash.json"), pod("crash", { containers: [busybox("main", "echo crashing; exit 3")] }));
  const s = await eventually(() => {
    const cs = statusOf("crash")?.containerStatuses?.[0];
    return cs && cs.restartCount! >= 2 && cs.state?.waiting?.reason === "CrashLoopBackOff" ? cs : undefined;
  }, 30_000, "CrashLoopBackOff after two restarts");
  assert.match(String(s.state?.waiting?.message), /^back-off \d+s restarting failed container=main pod=crash-node-ctrd_default/);
  assert.equal(s.lastState?.terminated?.exitCode, 3);
  assert.equal(s.lastState?.terminated?.reason, "Error");
  assert.equal(statusOf("crash")?.phase, "Running");
});

test("containerd: a failing liveness probe restarts the container", { skip }, async () => {
  writeFileSync(join(root, "manifests", "live.json"), pod("live", {
    containers: [busybox("main", "touch /tmp/alive; sleep 1; rm /tmp/alive; exec sleep 3600", { livenessProbe: { exec: { command: ["test", "-f", "/tmp/alive"] }, periodSeconds: 1, failureThreshold: 1 } })],
  }));
  const cs = await eventually(() => { const c = statusOf("live")?.containerStatuses?.[0]; return c && c.restartCount! >= 1 ? c : undefined; }, 30_000, "a liveness restart");
  assert.ok(cs.lastState?.terminated, "the killed container is the last state");
});

test("containerd: removing a pod stops its container with SIGTERM within the grace period", { skip }, async () => {
  writeFileSync(join(root, "manifests", "graceful.json"), pod("graceful", {
    containers: [busybox("main", "trap 'echo got TERM; exit 0' TERM; echo started; while true; do sleep 0.2; done")],
  }));
  await eventually(() => (statusOf("graceful")?.phase === "Running" ? true : undefined), 30_000, "graceful running");
  const uid = agent.pods().find((p) => p.pod.metadata.name === `graceful-${NODE}`)!.pod.metadata.uid;
  const logFile = join(root, "logs", `default_graceful-${NODE}_${uid}`, "main", "0.log");
  await eventually(() => (readFileSync(logFile, "utf8").includes("started") ? true : undefined), 10_000, "the trap to be set");
  const t0 = Date.now();
  rmSync(join(root, "manifests", "graceful.json"));
  await eventually(() => (statusOf("graceful") ? undefined : true), 20_000, "the pod to go");
  assert.ok(Date.now() - t0 < 5_000, "stopped by SIGTERM, not after the grace period");
  assert.match(readFileSync(logFile, "utf8"), /got TERM/);
});

test("containerd: a missing Localhost seccomp profile leaves the container waiting with CreateContainerError", { skip }, async () => {
  writeFileSync(join(root, "manifests", "seccomp.json"), pod("seccomp", {
    containers: [busybox("main", "sleep 3600", { securityContext: { seccompProfile: { type: "Localhost", localhostProfile: "missing.json" } } })],
  }));
  const cs = await eventually(() => { const c = statusOf("seccomp")?.containerStatuses?.[0]; return c?.state?.waiting?.reason === "CreateContainerError" ? c : undefined; }, 30_000, "CreateContainerError");
  assert.match(String(cs.state?.waiting?.message), /missing\.json: no such file or directory/);
  assert.equal(statusOf("seccomp")?.phase, "Pending");
});

test("containerd: the agent-managed /etc/hosts is mounted, with the pod's hostAliases", { skip }, async () => {
  writeFileSync(join(root, "manifests", "hosts.json"), pod("hosts", {
    hostAliases: [{ ip: "123.45.67.89", hostnames: ["foo.local", "bar.local"] }],
    containers: [busybox("main", "cat /etc/hosts; exec sleep 3600")],
  }));
  await eventually(() => (statusOf("hosts")?.phase === "Running" ? true : undefined), 30_000, "hosts running");
  const uid = agent.pods().find((p) => p.pod.metadata.name === `hosts-${NODE}`)!.pod.metadata.uid;
  const logFile = join(root, "logs", `default_hosts-${NODE}_${uid}`, "main", "0.log");
  const log = await eventually(() => { try { const t = readFileSync(logFile, "utf8"); return t.includes("HostAliases") ? t : undefined; } catch { return undefined; } }, 10_000, "the hosts file in the log");
  const lines = log.split("\n").map((l) => l.replace(/^\S+ stdout F /, ""));
  assert.match(lines[0]!, /^# Kubernetes-managed hosts file/);
  assert.ok(lines.includes("# Entries added by HostAliases."), log);
  assert.ok(lines.includes("123.45.67.89\tfoo.local\tbar.local"), log);
});

test("containerd: restarted under the running agent, the agent's CRI client reconnects: running pods stay Running and a new pod starts", { skip }, async () => {
  await eventually(() => (statusOf("web")?.phase === "Running" ? true : undefined), 30_000, "web running");
  const before = statusOf("web")!.containerStatuses![0]!.containerID;
  await containerd.restart();
  writeFileSync(join(root, "manifests", "after.json"), pod("after", { containers: [busybox("main", "exec sleep 3600")] }));
  await eventually(() => (statusOf("after")?.phase === "Running" ? true : undefined), 30_000, "a pod started after the restart running");
  assert.ok(agent.healthy(), "the PLEG relists again");
  const web = statusOf("web")!;
  assert.equal(web.phase, "Running");
  assert.equal(web.containerStatuses![0]!.containerID, before, "the container kept running under its shim: not restarted");
});
