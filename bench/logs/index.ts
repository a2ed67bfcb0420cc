// bench/logs: the node agent's CRI log reader (src/nodeagent/logs/log-reader.ts),
// what every `kubectl logs` runs. Compared with the simplest tools doing the
// same job on the same file: a raw file copy (no parsing: the ceiling for a
// whole-log read), readFile + split (tail without seeking), and coreutils'
// `tail -F` (inotify) for how soon a follow sees an appended line.
// Usage: node dist/bench/logs/index.js [--json] [--runs=N]

import { spawn } from "node:child_process";
import { appendFileSync, createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { formatLogRecord } from "../../src/nodeagent/cri/log-format.js";
import { readLog } from "../../src/nodeagent/logs/log-reader.js";
import { parseArgs, percentile, printReport, type Metric, type Report } from "../support/report.js";

const METRICS: Metric[] = [
  { name: "whole log of 64 MiB", unit: "MiB/s", better: "higher" },
  { name: "last 10 lines of a 64 MiB log", unit: "ms", better: "lower" },
  { name: "follow: appended line seen, p50", unit: "ms", better: "lower" },
  { name: "follow: appended line seen, p99", unit: "ms", better: "lower" },
];
const ORCH = "orch readLog";
const BASE = "baseline";

/** A sink that counts bytes, as fast as a socket that never pushes back. */
function nullSink(): Writable & { bytes: number } {
  const s = new Writable({ write(chunk: Buffer, _e, cb) { s.bytes += chunk.length; cb(); } }) as Writable & { bytes: number };
  s.bytes = 0;
  return s;
}

function bigLog(path: string): number {
  const lines: string[] = [];
  for (let i = 0; i < 8192; i++) lines.push(formatLogRecord(i % 7 === 0 ? "stderr" : "stdout", false, `request ${i} served in ${i % 97} ms by worker ${i % 13} ${"x".repeat(40)}`));
  const block = lines.join("");
  let content = "";
  while (content.length < 64 * 1024 * 1024) content += block;
  writeFileSync(path, content);
  return content.length;
}

async function timed(f: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

/** Milliseconds from each append until `seen(text)` says the reader has it. */
async function followLatencies(path: string, start: (onData: (text: string) => void) => () => void, count: number): Promise<number[]> {
  let seen = "";
  let wake: (() => void) | undefined;
  const stop = start((text) => {
    seen += text;
    wake?.();
  });
  await new Promise((r) => setTimeout(r, 300)); // let the watcher settle
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const marker = `tick-${i}-${Math.random()}`;
    const t = performance.now();
    appendFileSync(path, formatLogRecord("stdout", false, marker));
    while (!seen.includes(marker)) await new Promise<void>((r) => (wake = r));
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  stop();
  return out;
}

async function run(dir: string): Promise<Record<string, Record<string, number>>> {
  const path = join(dir, "0.log");
  const size = bigLog(path);
  const mib = size / 1024 / 1024;
  const orch: Record<string, number> = {};
  const base: Record<string, number> = {};

  orch[METRICS[0]!.name] = mib / ((await timed(() => readLog(path, {}, nullSink()))) / 1000);
  base[METRICS[0]!.name] = mib / ((await timed(() => pipeline(createReadStream(path), nullSink()))) / 1000);

  const sink = nullSink();
  orch[METRICS[1]!.name] = await timed(() => readLog(path, { tailLines: 10 }, sink));
  base[METRICS[1]!.name] = await timed(async () => {
    const lines = readFileSync(path, "utf8").split("\n");
    nullSink().write(lines.slice(-11).join("\n"));
  });

  const followed = join(dir, "follow.log");
  writeFileSync(followed, "");
  const mine = await followLatencies(followed, (onData) => {
    const abort = new AbortController();
    const s = new Writable({ write(chunk: Buffer, _e, cb) { onData(chunk.toString()); cb(); } });
    void readLog(followed, { follow: true, tailLines: 0 }, s, { signal: abort.signal, stillRunning: async () => true });
    return () => abort.abort();
  }, 50);
  const tail = await followLatencies(followed, (onData) => {
    const child = spawn("tail", ["-F", "-n", "0", followed], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", (d: Buffer) => onData(d.toString()));
    return () => child.kill();
  }, 50);
  orch[METRICS[2]!.name] = percentile(mine, 50);
  orch[METRICS[3]!.name] = percentile(mine, 99);
  base[METRICS[2]!.name] = percentile(tail, 50);
  base[METRICS[3]!.name] = percentile(tail, 99);
  return { [ORCH]: orch, [BASE]: base };
}

const args = parseArgs(process.argv.slice(2));
const report: Report = {
  title: "bench/logs: reading CRI container logs (the node agent's /containerLogs)",
  comparedWith: "baseline = raw file copy (whole log), readFile + split (tail), coreutils tail -F (follow)",
  runs: args.runs,
  metrics: METRICS,
  samples: { [ORCH]: {}, [BASE]: {} },
};
for (let i = 0; i < args.runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), "orch-bench-logs-"));
  try {
    const r = await run(dir);
    for (const [column, values] of Object.entries(r)) {
      for (const [metric, v] of Object.entries(values)) (report.samples[column]![metric] ??= []).push(v);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
printReport(report, args.json);
