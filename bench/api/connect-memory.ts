// bench/api/connect-memory: does the API server's native memory grow without
// bound over connect/close rounds (issue 18, point 3)? The real `orch
// apiserver`, rounds of 999 connections (a third raw TCP closed at once, a
// third TLS handshakes over HTTP/1.1, a third TLS handshakes that agree on h2
// and so open an HTTP/2 session), 100 at a time. RSS (VmRSS) is read at
// checkpoints, the JS heap from --trace-gc's last line; at the end glibc's
// malloc_trim(0) is called in the process through gdb (when present), which
// shows how much of the RSS was freed memory glibc had kept. Variants: glibc's
// defaults, and MALLOC_ARENA_MAX=2.
// With --snapshots, heap snapshots (--heapsnapshot-signal, taken after a full
// collection) after 1k connections and at the end give the live JS heap.
// Usage: node dist/bench/api/connect-memory.js [--connections=50000] [--variants=default,arena2] [--snapshots]

import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tcpConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { startOrch } from "../../test/support/orch-process.js";

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const TOTAL = Number(arg("connections", "50000"));
const VARIANTS = arg("variants", "default,arena2").split(",");
const SNAPSHOTS = process.argv.includes("--snapshots");
const ROUND = 999;
const CONCURRENCY = 100;

const rssMb = (pid: number) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The JS heap after the last GC (--trace-gc: "Mark-Compact 40.1 (58.0) -> 38.2 (57.0) MB"): used and committed MB. */
function lastHeap(output: string): string {
  const lines = [...output.matchAll(/(?:Mark-Compact|Scavenge)[^\n]*?-> ([\d.]+) \(([\d.]+)\) MB/g)];
  const m = lines.at(-1);
  return m === undefined ? "?" : `${m[1]} used / ${m[2]} committed`;
}

function one(port: number, ca: string, kind: number): Promise<void> {
  return new Promise((resolve) => {
    if (kind === 0) {
      const s = tcpConnect({ host: "127.0.0.1", port }, () => { s.destroy(); resolve(); });
      s.on("error", () => resolve());
      return;
    }
    const s = tlsConnect({ host: "127.0.0.1", port, ca, servername: "localhost", ALPNProtocols: kind === 2 ? ["h2"] : ["http/1.1"] }, () => {
      // An h2 session starts once the client preface arrives: send it, then close.
      if (kind === 2) s.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00");
      setImmediate(() => { s.destroy(); resolve(); });
    });
    s.on("error", () => resolve());
  });
}

async function round(port: number, ca: string): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < ROUND) {
      const i = next++;
      await one(port, ca, i % 3);
    }
  }));
}

/** Has the process write a heap snapshot into `dir` and answers the MB of live objects in it. */
async function liveHeapMb(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith(".heapsnapshot"));
    if (file === undefined) continue;
    // Complete once it parses (it is written in pieces).
    let h: { snapshot: { meta: { node_fields: string[] } }; nodes: number[] } | undefined;
    for (let tries = 0; h === undefined && tries < 120; tries++) {
      try {
        h = JSON.parse(readFileSync(join(dir, file), "utf8")) as typeof h;
      } catch {
        await sleep(1000);
      }
    }
    if (h === undefined) return "?";
    const fields = h.snapshot.meta.node_fields;
    const self = fields.indexOf("self_size");
    let total = 0;
    for (let n = 0; n < h.nodes.length; n += fields.length) total += h.nodes[n + self]!;
    rmSync(join(dir, file));
    return (total / 1048576).toFixed(1);
  }
  return "?";
}

function mallocTrim(pid: number): string {
  try {
    const out = execFileSync("gdb", ["-p", String(pid), "-batch", "-ex", "call (int) malloc_trim(0)"], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
    return /\$1 = (\d)/.exec(out)?.[1] ?? "?";
  } catch (err) {
    return `failed: ${(err as Error).message.split("\n")[0]}`;
  }
}

for (const variant of VARIANTS) {
  if (variant === "arena2") process.env["MALLOC_ARENA_MAX"] = "2";
  else delete process.env["MALLOC_ARENA_MAX"];
  const snapshots = mkdtempSync(join(tmpdir(), "orch-connect-memory-"));
  process.env["ORCH_NODE_ARGS"] = `--trace-gc${SNAPSHOTS ? ` --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}` : ""}`;
  const orch = await startOrch("apiserver", ["--max-connections=2000"]);
  try {
    const port = Number(new URL(orch.url).port);
    const ca = readFileSync(join(orch.dataDir, "ca.crt"), "utf8");
    await sleep(2000);
    const points: string[] = [`0: ${rssMb(orch.pid).toFixed(0)} MB`];
    const checkpoints = new Set([1, 5, 10, 20, 30, 40, 50, 75, 100].map((k) => k * 1000));
    const started = Date.now();
    for (let done = 0; done < TOTAL; ) {
      await round(port, ca);
      done += ROUND;
      const k = Math.round(done / 1000) * 1000;
      if (checkpoints.has(k) && Math.abs(done - k) < ROUND) points.push(`${k / 1000}k: ${rssMb(orch.pid).toFixed(0)} MB`);
      if (SNAPSHOTS && done === ROUND) points.push(`live JS heap ${await liveHeapMb(orch.pid, snapshots)} MB`);
    }
    await sleep(5000);
    const settled = rssMb(orch.pid);
    const heap = lastHeap(orch.output());
    const live = SNAPSHOTS ? `; live JS heap at the end ${await liveHeapMb(orch.pid, snapshots)} MB` : "";
    const trimmed = mallocTrim(orch.pid);
    await sleep(500);
    const after = rssMb(orch.pid);
    console.log(`${variant}${variant === "arena2" ? " (MALLOC_ARENA_MAX=2)" : ""}: ${TOTAL} connections in ${((Date.now() - started) / 1000).toFixed(0)} s; rss ${points.join(", ")}; ` +
      `5 s later ${settled.toFixed(0)} MB (JS heap ${heap} MB); malloc_trim(0) returned ${trimmed}, rss then ${after.toFixed(0)} MB${live}`);
  } finally {
    await orch.stop();
    rmSync(snapshots, { recursive: true, force: true });
  }
}
