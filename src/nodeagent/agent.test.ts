import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "./config/index.js";
import { startNodeAgent, type NodeAgent } from "./agent.js";
import { eventually } from "./testing/eventually.js";
import { MetricsRegistry } from "../component/metrics/index.js";

const manifest = (name: string, script: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: main\n    image: busybox\n    imagePullPolicy: IfNotPresent\n    command: ["sh", "-c", ${JSON.stringify(script)}]\n  terminationGracePeriodSeconds: 1\n`;

test("standalone: static pods on the embedded runtime follow added, changed and removed manifests", { skip: process.getuid?.() !== 0 ? "needs root (namespaces)" : undefined }, async () => {
  const root = mkdtempSync(join(tmpdir(), "nodeagent-standalone-"));
  const manifests = join(root, "manifests");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(manifests);
  const logs: string[] = [];
  let agent: NodeAgent | undefined;
  const metrics = new MetricsRegistry();
  try {
    agent = await startNodeAgent({
      stopContainersOnExit: true, // a test leaves no container behind
      config: { ...defaultConfig(), staticPodPath: manifests, fileCheckFrequency: 1_000 },
      rootDir: join(root, "agent"),
      podLogsDir: join(root, "logs"),
      nodeName: "node-a",
      metrics,
      tuning: { plegPeriodMs: 200, housekeepingMs: 500 },
      log: (l) => logs.push(l),
    });
    assert.equal(agent.mode, "standalone");
    // The seed's local directories, every one with its mode.
    const modes: [string, number][] = [
      ["agent", 0o750], ["agent/pods", 0o750], ["agent/plugins", 0o750], ["agent/plugins_registry", 0o750],
      ["agent/pod-resources", 0o750], ["agent/device-plugins", 0o750], ["agent/seccomp", 0o750],
      ["agent/image_manager", 0o700], ["agent/image_manager/pulling", 0o700], ["agent/image_manager/pulled", 0o700],
      ["agent/pki", 0o700], ["logs", 0o755],
    ];
    for (const [dir, mode] of modes) assert.equal(statSync(join(root, dir)).mode & 0o777, mode, `${dir} has mode ${mode.toString(8)}`);

    writeFileSync(join(manifests, "web.yaml"), manifest("web", "echo hello from web; exec sleep 3600"));
    const running = await eventually(() => agent!.pods().find((p) => p.pod.metadata.name === "web-node-a" && p.status.phase === "Running"), 20_000, "web running");
    const cs = running.status.containerStatuses![0]!;
    assert.ok(cs.state?.running, "container running");
    assert.equal(cs.restartCount, 0);
    assert.equal(running.status.conditions?.find((c) => c.type === "Ready")?.status, "True");
    const logDir = join(root, "logs", `default_web-node-a_${running.pod.metadata.uid}`);
    await eventually(() => (readFileSync(join(logDir, "main", "0.log"), "utf8").includes("hello from web") ? true : undefined), 10_000, "the container's log");
    // The agent's metrics: node name, running pods (from the PLEG), one pod start observed.
    const exposed = await eventually(() => { const t = metrics.expose(); return /^nodeagent_running_pods 1$/m.test(t) ? t : undefined; }, 5_000, "running pods metric");
    assert.match(exposed, /^nodeagent_node_name\{node="node-a"\} 1$/m);
    assert.match(exposed, /^nodeagent_pod_start_duration_seconds_count 1$/m);
    assert.match(exposed, /^nodeagent_pleg_relist_duration_seconds_count [1-9]\d*$/m);

    // A changed manifest is a new pod; the old one goes.
    writeFileSync(join(manifests, "web.yaml"), manifest("web", "echo changed; exec sleep 3600"));
    const changed = await eventually(() => agent!.pods().find((p) => p.pod.metadata.name === "web-node-a" && p.pod.metadata.uid !== running.pod.metadata.uid && p.status.phase === "Running"), 20_000, "the changed pod");
    await eventually(() => (agent!.pods().some((p) => p.pod.metadata.uid === running.pod.metadata.uid) ? undefined : true), 20_000, "the old pod to go");
    assert.ok(!existsSync(join(root, "agent", "pods", running.pod.metadata.uid!)), "the old pod's directory is removed");

    // A removed manifest stops its pod.
    rmSync(join(manifests, "web.yaml"));
    await eventually(() => (agent!.pods().some((p) => p.pod.metadata.uid === changed.pod.metadata.uid) ? undefined : true), 20_000, "the removed pod to go");
    assert.deepEqual(readdirSync(join(root, "agent", "pods")), []);
  } catch (err) {
    console.error(logs.join("\n"));
    throw err;
  } finally {
    await agent?.stop();
    rmSync(root, { recursive: true, force: true, maxRetries: 10 });
  }
});

test("startNodeAgent refuses to start with swap on and failSwapOn, before touching the root directory", async () => {
  const root = join(mkdtempSync(join(tmpdir(), "nodeagent-swap-")), "agent");
  await assert.rejects(
    startNodeAgent({ rootDir: root, tuning: { swapTotalBytes: 1 << 30 } }),
    /running with swap on is not supported, please disable swap or set failSwapOn to false/,
  );
  assert.equal(existsSync(root), false);
});
