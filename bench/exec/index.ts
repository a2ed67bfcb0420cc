// bench/exec: `kubectl exec` on the embedded runtime of a real `orch server`
// process. The same command three ways: kubectl 1.33 (a process per exec, as a
// user runs it), a WebSocket client through the API server's pods/exec, and a
// WebSocket client straight to the node agent's /exec (what the API server's
// proxy adds is the difference between the last two). Latency of `true`
// (sequential, median of 20) and stdout throughput (64 MiB from the container).
// Usage: node dist/bench/exec/index.js [--json] [--runs=N]

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Kubectl, kubectlPath } from "../../test/support/kubectl.js";
import { agentExec, type ExecClientOptions } from "../../test/support/exec-client.js";
import { startOrch } from "../../test/support/orch-process.js";
import { median, parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const METRICS: Metric[] = [
  { name: "exec `true`, latency (median of 20)", unit: "ms", better: "lower" },
  { name: "stdout throughput (64 MiB)", unit: "MiB/s", better: "higher" },
];
const BYTES = 64 << 20;
const COLUMNS = ["kubectl exec", "via API server", "agent direct"] as const;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const orch = await startOrch("server", ["--node-name=bench-exec"], { readyTimeoutMs: 60_000 });
  try {
    const k = new Kubectl(orch.kubeconfig);
    await k.ok("run", "box", "--image=busybox", "--", "sleep", "100000");
    await k.ok("wait", "--for=condition=Ready", "pod/box", "--timeout=60s");
    const node = JSON.parse(await k.ok("get", "node", "bench-exec", "-o", "json")) as { status: { daemonEndpoints: { kubeletEndpoint: { Port: number } } } };
    const agentBase = `wss://127.0.0.1:${node.status.daemonEndpoints.kubeletEndpoint.Port}/exec/default/box/box`;
    const apiBase = `${orch.url.replace("https:", "wss:")}/api/v1/namespaces/default/pods/box/exec`;
    const token = readFileSync(join(orch.dataDir, "admin.token"), "utf8").trim();
    const cert = { cert: readFileSync(join(orch.dataDir, "apiserver-nodeagent-client.crt"), "utf8"), key: readFileSync(join(orch.dataDir, "apiserver-nodeagent-client.key"), "utf8") };
    const cmd = (words: string[], stdout: string) => `${words.map((w) => `command=${encodeURIComponent(w)}`).join("&")}&${stdout}`;
    const ws = async (column: string, words: string[], countOnly: boolean): Promise<number> => {
      const options: ExecClientOptions = { countOnly, ...(column === "agent direct" ? cert : { headers: { authorization: `Bearer ${token}` } }) };
      const url = column === "agent direct" ? `${agentBase}?${cmd(words, "output=1")}` : `${apiBase}?${cmd(words, "stdout=true")}`;
      const r = await agentExec(url, options);
      if (r.status?.status !== "Success") throw new Error(`${column}: ${JSON.stringify(r.refused ?? r.status)}`);
      return r.stdoutBytes;
    };
    const kubectl = kubectlPath()!;
    const viaKubectl = (words: string[]): Promise<void> => new Promise((resolve, reject) => {
      // The output goes to /dev/null through a shell, so the bench process does not buffer 64 MiB.
      const line = [kubectl, "--kubeconfig", orch.kubeconfig, "exec", "box", "--", ...words].map((w) => `'${w}'`).join(" ");
      execFile("sh", ["-c", `${line} > /dev/null`], (err) => (err ? reject(err) : resolve()));
    });
    const run = (column: string, words: string[], countOnly: boolean) => (column === "kubectl exec" ? viaKubectl(words) : ws(column, words, countOnly).then(() => {}));

    const samples: Report["samples"] = {};
    for (const column of COLUMNS) samples[column] = { [METRICS[0]!.name]: [], [METRICS[1]!.name]: [] };
    for (let i = 0; i < args.runs; i++) {
      for (const column of COLUMNS) {
        const latencies: number[] = [];
        for (let j = 0; j < 20; j++) {
          const t0 = performance.now();
          await run(column, ["true"], false);
          latencies.push(performance.now() - t0);
        }
        samples[column]![METRICS[0]!.name]!.push(median(latencies));
        const t0 = performance.now();
        await run(column, ["head", "-c", String(BYTES), "/dev/zero"], true);
        samples[column]![METRICS[1]!.name]!.push(BYTES / (1 << 20) / ((performance.now() - t0) / 1000));
      }
    }
    printReport({
      title: "bench/exec: kubectl exec on orch server, embedded runtime",
      comparedWith: "the agent's /exec without the API server (the proxy's cost) and kubectl itself (a process per exec)",
      runs: args.runs,
      metrics: METRICS,
      samples,
    }, args.json);
  } finally {
    await orch.stop();
  }
}

await main();
