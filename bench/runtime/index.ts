// bench/runtime: CRI call latencies of the embedded runtime and containerd
// side by side, through the same CriClient the node agent uses: one pod's
// sandbox, a busybox container created, started, stopped and the sandbox
// removed, repeated. Compared with containerd 1.6 + runc on the same machine
// (REAL-COMPONENTS.md quotes RunPodSandbox ~200 ms, Create 30 ms, Start 140 ms).
// The pod-start target the agent's issue sets is ≤ 1 s (embedded), ≤ 3 s (containerd).
// Usage: node dist/bench/runtime/index.js [--json] [--runs=N] [--only=embedded,containerd] [--pods=20]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CriClient } from "../../src/nodeagent/cri/index.js";
import { startEmbeddedRuntime } from "../../src/nodeagent/runtime/embedded/index.js";
import { importArchive } from "../../src/nodeagent/runtime/images/archive.js";
import { buildBusyboxImage } from "../../test/support/busybox-image.js";
import { BUSYBOX_IMAGE, containerdSkipReason, startContainerd } from "../../test/support/containerd.js";
import { parseArgs, percentile, printReport, type Metric, type Report } from "../support/report.js";

const PHASES = ["RunPodSandbox", "CreateContainer", "StartContainer", "StopContainer (timeout 0)", "RemovePodSandbox", "pod start (sandbox+create+start)"] as const;
const METRICS: Metric[] = PHASES.flatMap((p) => [
  { name: `${p} p50`, unit: "ms", better: "lower" as const },
  { name: `${p} p99`, unit: "ms", better: "lower" as const, ...(p.startsWith("pod start") ? { target: 1000 } : {}) },
]);

async function measure(client: CriClient, image: string, pods: number, hostNetwork: boolean, dir: string): Promise<Record<string, number>> {
  const samples = new Map<string, number[]>(PHASES.map((p) => [p, []]));
  const time = async <T>(phase: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const r = await fn();
    samples.get(phase)!.push(performance.now() - t0);
    return r;
  };
  for (let i = 0; i < pods; i++) {
    const config = {
      metadata: { name: `bench-${i}`, uid: `bench-${process.pid}-${i}`, namespace: "bench" },
      hostname: hostNetwork ? "" : `bench-${i}`,
      logDirectory: join(dir, "logs", String(i)),
      linux: { securityContext: { namespaceOptions: { network: hostNetwork ? "NODE" as const : "POD" as const, pid: "CONTAINER" as const } } },
    };
    const t0 = performance.now();
    const { podSandboxId } = await time("RunPodSandbox", () => client.runPodSandbox({ config }));
    const { containerId } = await time("CreateContainer", () => client.createContainer({ podSandboxId, sandboxConfig: config, config: { metadata: { name: "c" }, image: { image }, command: ["sleep", "3600"], logPath: "c.log" } }));
    await time("StartContainer", () => client.startContainer({ containerId }));
    samples.get("pod start (sandbox+create+start)")!.push(performance.now() - t0);
    await time("StopContainer (timeout 0)", () => client.stopContainer({ containerId, timeout: 0 }));
    await client.stopPodSandbox({ podSandboxId });
    await time("RemovePodSandbox", () => client.removePodSandbox({ podSandboxId }));
  }
  const out: Record<string, number> = {};
  for (const [phase, values] of samples) {
    out[`${phase} p50`] = percentile(values, 50);
    out[`${phase} p99`] = percentile(values, 99);
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const podsArg = process.argv.find((a) => a.startsWith("--pods="));
  const pods = podsArg === undefined ? 20 : Number(podsArg.slice("--pods=".length));
  const want = (name: string) => args.only.length === 0 || args.only.includes(name);
  const report: Report = {
    title: `CRI latencies, ${pods} pods in sequence (one busybox container each)`,
    comparedWith: "containerd 1.6.20 + runc 1.1.5 (Debian) on the same machine",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  const record = (column: string, values: Record<string, number>) => {
    const col = (report.samples[column] ??= {});
    for (const [k, v] of Object.entries(values)) (col[k] ??= []).push(v);
  };
  for (let run = 0; run < args.runs; run++) {
    if (want("embedded")) {
      const dir = mkdtempSync(join(tmpdir(), "orch-bench-rt-"));
      const runtime = await startEmbeddedRuntime({ root: join(dir, "rt") });
      const client = new CriClient({ endpoint: runtime.endpoint });
      await buildBusyboxImage({ file: join(dir, "bb.tar") });
      await importArchive(runtime.service.images, join(dir, "bb.tar"));
      record("embedded", await measure(client, "busybox", pods, false, dir));
      client.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
    if (want("containerd")) {
      const skip = containerdSkipReason();
      if (skip !== undefined) {
        if (run === 0) console.error(`containerd skipped: ${skip}`);
      } else {
        const containerd = await startContainerd();
        await buildBusyboxImage({ file: join(containerd.dir, "bb.tar") });
        await containerd.importImage(join(containerd.dir, "bb.tar"));
        record("containerd", await measure(containerd.client, BUSYBOX_IMAGE, pods, !containerd.cni, containerd.dir));
        await containerd.stop();
      }
    }
  }
  printReport(report, args.json);
}

await main();
