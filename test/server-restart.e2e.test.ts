// End to end: `orch server` stopped with Ctrl-C (SIGINT) and started again on
// the same --data-dir re-adopts the pods that kept running (issue 8): same
// container IDs, processes, start times and pod IPs, restart count 0; a
// container that ended while orch was down is reported with its exit code;
// CRI logs keep being written throughout. --stop-pods-on-exit stops them.
// Real kubectl 1.33, real orch processes, the embedded runtime (busybox is not
// imported, so the commands run on the host's file system); then the same
// restart on a private containerd.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { buildBusyboxImage } from "./support/busybox-image.js";
import { containerdSkipReason, startContainerd, type Containerd } from "./support/containerd.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { presentedFingerprint } from "../src/component/testing/presented-cert.js";

// Command lines no other process on the machine has, so `pgrep -f` finds exactly this suite's containers.
const TOKEN = String(800_000 + (process.pid % 100_000));
const files = mkdtempSync(join(tmpdir(), "orch-e2e-restart-"));
const GO = join(files, "go");

const MANIFESTS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sleep, "${TOKEN}"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: ticker}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: busybox, command: [sh, -c, 'i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.1; done; : ${TOKEN}']}]
---
apiVersion: v1
kind: Pod
metadata: {name: ender}
spec:
  restartPolicy: Never
  containers: [{name: main, image: busybox, command: [sh, -c, 'while [ ! -e ${GO} ]; do sleep 0.05; done; echo bye; exit 3; : ${TOKEN}']}]
`;

interface PodJson {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { containerID?: string; restartCount: number; state: { running?: { startedAt: string }; terminated?: { exitCode: number; reason?: string } } }[];
  };
}

/** Pids of host processes whose command line matches `pattern` (anchored by the caller). */
function pids(pattern: string): Promise<number[]> {
  return new Promise((resolve) => {
    execFile("pgrep", ["-f", pattern], (_err, stdout) => resolve(stdout.split("\n").filter((l) => l !== "").map(Number).filter((p) => p !== process.pid)));
  });
}
const sleepers = () => pids(`^sleep ${TOKEN}$`);
const suiteProcesses = () => pids(TOKEN);
const running = (p: PodJson) => p.status.phase === "Running" && p.status.containerStatuses?.[0]?.state.running !== undefined;
after(() => rmSync(files, { recursive: true, force: true, maxRetries: 10 }));

describe("orch server restarts re-adopt running pods (embedded runtime)", { skip: kubectlSkipReason() ?? (process.getuid?.() !== 0 ? "the embedded runtime's pod network needs root" : false) }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "orch-e2e-restart-data-"));
  let orch: OrchProcess | undefined;
  after(async () => {
    await orch?.stop();
    for (const pid of await suiteProcesses()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 });
  });

  const podsOf = async (k: Kubectl) => (JSON.parse(await k.ok("get", "pods", "-o", "json")).items as PodJson[]).filter((p) => !p.metadata.deletionTimestamp);
  const byName = (pods: PodJson[]) => Object.fromEntries(pods.map((p) => [p.metadata.name, p]));
  const logOf = (pod: PodJson) => {
    const root = join(dataDir, "nodeagent", "pod-logs");
    const dir = readdirSync(root).find((d) => d.endsWith(`_${pod.metadata.uid}`));
    return dir === undefined ? "" : readFileSync(join(root, dir, "main", "0.log"), "utf8");
  };
  const ticks = (pod: PodJson) => (logOf(pod).match(/ stdout F tick \d+\n/g) ?? []).length;

  test("SIGINT leaves the pods running; the next orch server adopts them as they are, with exits and logs from the time between", async () => {
    orch = await startOrch("server", ["--node-name=restart"], { dataDir, keepPods: true, readyTimeoutMs: 60_000 });
    let k = new Kubectl(orch.kubeconfig);
    writeFileSync(join(files, "all.yaml"), MANIFESTS);
    await k.ok("create", "-f", join(files, "all.yaml"));
    const before = await eventually("4 pods Running", async () => {
      const pods = await podsOf(k);
      return pods.length === 4 && pods.every(running) ? pods : undefined;
    }, 60_000);
    const pidsBefore = (await sleepers()).sort();
    assert.equal(pidsBefore.length, 2, "one host process per web container");
    const ticker = byName(before)["ticker"]!;
    await eventually("the ticker's first lines", async () => (ticks(ticker) > 0 ? true : undefined));
    // The agent's serving certificate, which the next orch server serves again (kept in the data folder).
    const agentCert = async (kc: Kubectl) => presentedFingerprint(Number(await kc.ok("get", "node", "restart", "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}")));
    const certBefore = await agentCert(k);
    assert.equal(statSync(join(dataDir, "nodeagent", "pki", "nodeagent.key")).mode & 0o777, 0o600);

    await orch.stop("SIGINT");
    assert.match(orch.output(), /orch server: 4 pods keep running; the next orch server with --data-dir \S+ re-adopts them/);
    assert.deepEqual((await sleepers()).sort(), pidsBefore, "the containers outlive orch server");
    // While orch is down: the log keeps growing, and a container ends with its own status.
    const down = ticks(ticker);
    await eventually("ticks written while orch is down", async () => (ticks(ticker) >= down + 3 ? true : undefined));
    writeFileSync(GO, "");
    await eventually("the ender to end", async () => ((await pids(`exit 3; : ${TOKEN}`)).length === 0 ? true : undefined));

    orch = await startOrch("server", ["--node-name=restart"], { dataDir, readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    const ended = await eventually("the ender reported Failed with exit code 3", async () => {
      const p = byName(await podsOf(k))["ender"];
      return p?.status.phase === "Failed" ? p : undefined;
    }, 60_000);
    assert.equal(ended.status.containerStatuses?.[0]?.state.terminated?.exitCode, 3);
    assert.equal(await agentCert(k), certBefore, "the restarted agent serves the same certificate");
    assert.equal(ended.status.containerStatuses?.[0]?.state.terminated?.reason, "Error");
    assert.match(logOf(ended), / stdout F bye\n/);
    const after = byName(await podsOf(k));
    for (const old of before.filter((p) => p.metadata.name !== "ender")) {
      const now = after[old.metadata.name]!;
      assert.ok(running(now), `${old.metadata.name} runs`);
      const [was, is] = [old.status.containerStatuses![0]!, now.status.containerStatuses![0]!];
      assert.equal(is.containerID, was.containerID, `${old.metadata.name}: the same container`);
      assert.equal(is.restartCount, 0, `${old.metadata.name}: not restarted`);
      assert.equal(is.state.running?.startedAt, was.state.running?.startedAt, `${old.metadata.name}: the same start`);
      assert.equal(now.status.podIP, old.status.podIP, `${old.metadata.name}: the same pod IP`);
    }
    assert.deepEqual((await sleepers()).sort(), pidsBefore, "the same processes");
    const up = ticks(ticker);
    await eventually("ticks after the restart", async () => (ticks(ticker) > up ? true : undefined));

    await k.ok("delete", "deployment", "web");
    await eventually("the web containers' processes to end", async () => ((await sleepers()).length === 0 ? true : undefined), 60_000);

    // This server runs with --stop-pods-on-exit (the test support's default): the ticker goes with it.
    assert.equal((await pids(`tick.*${TOKEN}`)).length, 1);
    await orch.stop("SIGINT");
    orch = undefined;
    assert.deepEqual(await suiteProcesses(), [], "no container of this suite is left");
  });
});

describe("orch server restarts re-adopt running pods (containerd)", { skip: kubectlSkipReason() ?? containerdSkipReason() ?? false }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "orch-e2e-restart-ctrd-"));
  const sleep = `${Number(TOKEN) + 1}`;
  let containerd: Containerd | undefined;
  let orch: OrchProcess | undefined;
  before(async () => {
    containerd = await startContainerd();
    await buildBusyboxImage({ file: join(containerd.dir, "busybox.tar") });
    await containerd.importImage(join(containerd.dir, "busybox.tar"));
  });
  after(async () => {
    await orch?.stop();
    await containerd?.stop();
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 });
  });

  test("the agent finds containerd's running containers after a restart and keeps them", async () => {
    const args = ["--node-name=restart-ctrd", `--container-runtime-endpoint=${containerd!.endpoint}`];
    orch = await startOrch("server", args, { dataDir, keepPods: true, readyTimeoutMs: 60_000 });
    let k = new Kubectl(orch.kubeconfig);
    writeFileSync(join(files, "ctrd.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, "${sleep}"]}]
`);
    await k.ok("create", "-f", join(files, "ctrd.yaml"));
    const podOf = async () => (JSON.parse(await k.ok("get", "pod", "sleeper", "-o", "json")) as PodJson);
    const before = await eventually("the pod Running", async () => {
      const p = await podOf();
      return running(p) ? p : undefined;
    }, 60_000);
    const pid = await pids(`^sleep ${sleep}$`);
    assert.equal(pid.length, 1);

    await orch.stop("SIGINT");
    assert.deepEqual(await pids(`^sleep ${sleep}$`), pid, "containerd keeps the container");
    orch = await startOrch("server", args, { dataDir, readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    // Once the restarted agent has synced the pod, its status is written anew; it must describe the same container.
    const after = await eventually("the restarted agent's status", async () => {
      const p = await podOf();
      return running(p) && p.status.containerStatuses?.[0]?.containerID === before.status.containerStatuses?.[0]?.containerID ? p : undefined;
    }, 60_000);
    const [was, is] = [before.status.containerStatuses![0]!, after.status.containerStatuses![0]!];
    assert.equal(is.restartCount, 0);
    assert.equal(is.state.running?.startedAt, was.state.running?.startedAt);
    assert.equal(after.status.podIP, before.status.podIP);
    assert.deepEqual(await pids(`^sleep ${sleep}$`), pid, "the same process, not restarted");
    // --stop-pods-on-exit on containerd: the agent stops the pod's containers as it exits.
    await orch.stop("SIGINT");
    orch = undefined;
    await eventually("the container to be stopped", async () => ((await pids(`^sleep ${sleep}$`)).length === 0 ? true : undefined));
  });
});
