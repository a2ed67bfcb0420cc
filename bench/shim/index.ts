// bench/shim: what the embedded runtime's container shim costs per container.
// Containers (host network, so pod networking is not measured) are started one
// after another through the CRI client; then one container writes many lines.
// Measured: StartContainer latency, CPU of the whole start (runtime process
// plus its reaped children), the shim's memory (proportional set size), and the
// CPU and time to carry 100,000 log lines into the CRI file. Compared with the
// runtime before the shim (a build of main before wip/readopt: output piped
// into the runtime process and written by CriLogWriter): run this same file
// from both builds; the table says which one it is.
// Usage: node dist/bench/shim/index.js [--json] [--runs=N] [--containers=20] [--lines=100000]

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CriClient } from "../../src/nodeagent/cri/index.js";
import { startEmbeddedRuntime } from "../../src/nodeagent/runtime/embedded/index.js";
import { parseArgs, percentile, printReport, type Metric, type Report } from "../support/report.js";

const METRICS: Metric[] = [
  { name: "StartContainer p50", unit: "ms", better: "lower" },
  { name: "StartContainer p99", unit: "ms", better: "lower" },
  { name: "CPU per container start (runtime + children)", unit: "ms", better: "lower" },
  { name: "shim memory (PSS) per running container", unit: "KiB", better: "lower" },
  { name: "log lines: time for 100k", unit: "ms", better: "lower" },
  { name: "log lines: CPU for 100k (runtime + children, less the command)", unit: "ms", better: "lower" },
];

/** CPU milliseconds of this process and of its reaped children (/proc/self/stat utime, stime, cutime, cstime). */
function cpuMs(): { self: number; children: number } {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  const tick = 10; // USER_HZ 100
  return { self: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick };
}

function pssKiB(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

async function measure(containers: number, lines: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "orch-bench-shim-"));
  const rt = await startEmbeddedRuntime({ root: join(dir, "rt"), network: false });
  const client = new CriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  try {
    const config = { metadata: { name: "bench", uid: `bench-${process.pid}`, namespace: "bench" }, hostname: "", logDirectory: join(dir, "logs") };
    const { podSandboxId } = await client.runPodSandbox({ config });
    const create = async (name: string, command: string[]) => (await client.createContainer({ podSandboxId, sandboxConfig: config, config: { metadata: { name }, image: { image: "none" }, command, logPath: `${name}.log` } })).containerId;
    const starts: number[] = [];
    const ids: string[] = [];
    const cpu0 = cpuMs();
    for (let i = 0; i < containers; i++) {
      const id = await create(`c${i}`, ["sleep", "3600"]);
      const t0 = performance.now();
      await client.startContainer({ containerId: id });
      starts.push(performance.now() - t0);
      ids.push(id);
    }
    const cpu1 = cpuMs();
    // The shims' PIDs are in the records (runtimes before the shim have none: 0 KiB more per container).
    const shimPids = ids.map((id) => (JSON.parse(readFileSync(join(dir, "rt", "state", "containers", `${id}.json`), "utf8")) as { shimPid?: number }).shimPid ?? 0);
    const pss = shimPids.map((p) => (p > 0 ? pssKiB(p) : 0));
    for (const id of ids) await client.stopContainer({ containerId: id, timeout: 0 });
    // Start-up CPU includes the children reaped so far; stopped ones are reaped by now.
    const cpu2 = cpuMs();
    const startCpu = (cpu1.self - cpu0.self) + (cpu2.children - cpu0.children);

    // Log throughput: the command's own CPU (seq, measured alone first) is taken off.
    const alone = cpuMs();
    await new Promise<void>((resolve, reject) => {
      import("node:child_process").then(({ spawn }) => {
        const p = spawn("seq", ["1", String(lines)], { stdio: ["ignore", "ignore", "ignore"] });
        p.once("exit", () => resolve());
        p.once("error", reject);
      }, reject);
    });
    const seqCpu = cpuMs().children - alone.children;
    const id = await create("lines", ["seq", "1", String(lines)]);
    const c0 = cpuMs();
    const t0 = performance.now();
    await client.startContainer({ containerId: id });
    for (;;) {
      const { status } = await client.containerStatus({ containerId: id });
      if (status?.state === "CONTAINER_EXITED") break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const took = performance.now() - t0;
    const c1 = cpuMs();
    const file = join(dir, "logs", "lines.log");
    const written = existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0;
    if (written !== lines) throw new Error(`expected ${lines} records, found ${written}`);
    await client.removePodSandbox({ podSandboxId });
    return {
      "StartContainer p50": percentile(starts, 50),
      "StartContainer p99": percentile(starts, 99),
      "CPU per container start (runtime + children)": startCpu / containers,
      "shim memory (PSS) per running container": percentile(pss, 50),
      "log lines: time for 100k": (took * 100_000) / lines,
      "log lines: CPU for 100k (runtime + children, less the command)": (((c1.self - c0.self) + (c1.children - c0.children) - seqCpu) * 100_000) / lines,
    };
  } finally {
    client.close();
    await rt.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
  const containers = arg("containers", 20);
  const lines = arg("lines", 100_000);
  const shim = existsSync(new URL("../../src/nodeagent/runtime/embedded/shim.js", import.meta.url));
  const column = shim ? "shim (this build)" : "pipes into the runtime (this build)";
  const report: Report = {
    title: `bench/shim: per-container cost of the embedded runtime's container shim (${containers} containers, host network, ${lines} log lines)`,
    comparedWith: "the same benchmark run from a build without the shim (main before wip/readopt), where the runtime process reads the pipes",
    runs: args.runs,
    metrics: METRICS,
    samples: { [column]: {} },
  };
  for (let r = 0; r < args.runs; r++) {
    const result = await measure(containers, lines);
    for (const [k, v] of Object.entries(result)) (report.samples[column]![k] ??= []).push(v);
  }
  printReport(report, args.json);
}

await main();
