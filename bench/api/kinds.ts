// bench/api/kinds: what the number of kinds served costs. The same real
// `orch apiserver` (lmdb) twice: with the built-in kinds only, then with
// twice as many again registered as CustomResourceDefinitions (3× the
// kinds: each its own storage, watch cache, discovery and OpenAPI entries).
// Measured: the server's idle RSS and CPU once the kinds are served and it
// has settled (5 s, then 5 s measured), GET of one pod (64 HTTP/2 streams) and LIST of 500 pods, as
// bench/api, and the discovery documents a client reads first.
// Usage: node dist/bench/api/kinds.js [--json] [--runs=N] [--factor=3]

import { readFileSync } from "node:fs";
import { startOrch, type OrchProcess } from "../../test/support/orch-process.js";
import { benchClient, closedLoop as loop, ensureNamespace, expectStatus, fillPods, type BenchClient } from "../support/http2-client.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const PHASE_MS = 3000;
const SETTLE_MS = 5000;

const METRICS: Metric[] = [
  { name: "kinds served", unit: "kinds", better: "higher" },
  { name: "idle RSS, kinds served, 10 s after", unit: "MiB", better: "lower" },
  { name: "idle CPU, the 5 s before", unit: "ms/s", better: "lower" },
  { name: "GET/s (one pod, 64 streams)", unit: "req/s", better: "higher" },
  { name: "LIST of 500 pods/s", unit: "req/s", better: "higher" },
  { name: "discovery /api + /apis (aggregated v2)/s", unit: "req/s", better: "higher" },
];

/** CPU time the process has used (user + system), in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

const json = async (c: BenchClient, path: string) => JSON.parse(expectStatus(await c.request("GET", path), 200, `GET ${path}`).toString());

/** The kinds discovery lists (resources, not subresources, over every group's versions), and the CRD group's name. */
async function kinds(c: BenchClient): Promise<{ count: number; crdGroup: string }> {
  const names = new Set<string>();
  for (const r of (await json(c, "/api/v1")).resources) if (!r.name.includes("/")) names.add(r.name);
  const groups = (await json(c, "/apis")).groups as { name: string; versions: { groupVersion: string }[] }[];
  for (const g of groups) {
    for (const v of g.versions) for (const r of (await json(c, `/apis/${v.groupVersion}`)).resources) if (!r.name.includes("/")) names.add(`${r.name}.${g.name}`);
  }
  return { count: names.size, crdGroup: groups.find((g) => g.name.startsWith("apiextensions."))!.name };
}

/** `count` namespaced CRDs, ten kinds a group, and waits until discovery lists them all. */
async function registerKinds(c: BenchClient, crdGroup: string, count: number, before: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < count) {
      const i = next++;
      const group = `g${Math.floor(i / 10)}.bench.example.com`;
      const crd = {
        apiVersion: `${crdGroup}/v1`, kind: "CustomResourceDefinition",
        metadata: { name: `kind${i}s.${group}` },
        spec: {
          group, scope: "Namespaced",
          names: { plural: `kind${i}s`, singular: `kind${i}`, kind: `Kind${i}`, listKind: `Kind${i}List` },
          versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" }, text: { type: "string" } } } } } } }],
        },
      };
      expectStatus(await c.request("POST", `/apis/${crdGroup}/v1/customresourcedefinitions`, crd), 201, `CRD ${i}`);
    }
  }));
  for (let i = 0; ; i++) {
    if ((await kinds(c)).count >= before + count) return;
    if (i > 600) throw new Error("the custom kinds never all appeared in discovery");
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function measure(orch: OrchProcess, extra: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const c = benchClient(orch);
  try {
    const { count, crdGroup } = await kinds(c);
    if (extra > 0) await registerKinds(c, crdGroup, extra, count);
    out[METRICS[0]!.name] = (await kinds(c)).count;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const cpu = cpuMs(orch.pid);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    out[METRICS[1]!.name] = rssMiB(orch.pid);
    out[METRICS[2]!.name] = (cpuMs(orch.pid) - cpu) / (SETTLE_MS / 1000);
    await ensureNamespace(c, "bench");
    await fillPods(c, "bench", 500, "p");
    out[METRICS[3]!.name] = await loop(64, PHASE_MS, async () => {
      expectStatus(await c.request("GET", "/api/v1/namespaces/bench/pods/p-7"), 200, "GET");
    });
    out[METRICS[4]!.name] = await loop(8, PHASE_MS, async () => {
      expectStatus(await c.request("GET", "/api/v1/namespaces/bench/pods"), 200, "LIST");
    });
    const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    out[METRICS[5]!.name] = await loop(8, PHASE_MS, async () => {
      for (const path of ["/api", "/apis"]) {
        const s = c.session.request({ ":path": path, authorization: `Bearer ${c.token}`, accept: aggregated });
        await new Promise<void>((resolve, reject) => s.on("data", () => {}).once("end", resolve).once("error", reject).end());
      }
    });
  } finally {
    c.close();
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const factorArg = process.argv.find((a) => a.startsWith("--factor="));
  const factor = factorArg === undefined ? 3 : Number(factorArg.slice("--factor=".length));
  const report: Report = {
    title: `bench/api/kinds: the API server (lmdb) with ${factor}x its built-in kinds (the extra ones CRDs), over HTTP/2`,
    comparedWith: "the same server with its built-in kinds only",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  for (const column of ["built-in kinds", `${factor}x kinds`]) {
    const samples: Record<string, number[]> = {};
    for (let run = 0; run < args.runs; run++) {
      const orch = await startOrch("apiserver", [], { readyTimeoutMs: 60_000 });
      try {
        let extra = 0;
        if (column !== "built-in kinds") {
          const c = benchClient(orch);
          try {
            extra = (factor - 1) * (await kinds(c)).count;
          } finally {
            c.close();
          }
        }
        for (const [k, v] of Object.entries(await measure(orch, extra))) (samples[k] ??= []).push(v);
      } finally {
        await orch.stop();
      }
      if (!args.json) process.stderr.write(`${column}: run ${run + 1}/${args.runs} done\n`);
    }
    report.samples[column] = samples;
  }
  printReport(report, args.json);
}

await main();
