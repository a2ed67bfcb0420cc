// Prints the fault suite's per-fault table (or --json): node dist/test/ha/faults-report.js [--json] [FAULT-SUBSTRING...]
// Runs each fault of faults-scenarios.ts on a fresh 3-member etcd cluster, and the lmdb kill -9.

import { loadavg } from "node:os";
import { FAULTS, runEtcdFault, runLmdbKill, type FaultReport } from "./faults-scenarios.js";

const args = process.argv.slice(2);
const json = args.includes("--json");
const filters = args.filter((a) => a !== "--json");
const wanted = (name: string) => filters.length === 0 || filters.some((f) => name.includes(f));
const reports: FaultReport[] = [];
for (const name of Object.keys(FAULTS)) if (wanted(name)) reports.push(await runEtcdFault(name));
if (wanted("lmdb kill -9 orch apiserver")) reports.push({ ...(await runLmdbKill()), fault: "lmdb: kill -9 orch apiserver" });
const load = loadavg().map((l) => l.toFixed(2)).join(" ");
if (json) {
  console.log(JSON.stringify({ date: new Date().toISOString(), loadavg: load, reports }, null, 2));
} else {
  console.log(`${new Date().toISOString()}  load average ${load}`);
  console.log("| fault | writers | watchers | ops | acked writes | lost | linearizable | watch violations | unavailable (s) | client errors |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const r of reports) {
    const errors = Object.entries(r.errors).map(([k, v]) => `${k}: ${v}`).join(", ") || "none";
    console.log(`| ${r.fault} | ${r.writers} | ${r.watchers} | ${r.ops} | ${r.acknowledged} | ${r.lost} | ${r.linearizable ? "yes" : "NO"}${r.inconclusiveKeys ? ` (${r.inconclusiveKeys} keys inconclusive)` : ""} | ${r.watchViolations} | ${r.unavailableS} | ${errors} |`);
  }
  for (const r of reports) for (const d of r.details) console.log(`${r.fault}: ${d}`);
}
process.exit(reports.every((r) => r.lost === 0 && r.linearizable && r.watchViolations === 0) ? 0 : 1);
