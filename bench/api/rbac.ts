// bench/api/rbac: what authorization costs per request. The same real
// `orch apiserver` (lmdb) twice: the admin under --authorization-mode=
// AlwaysAllow, then a client-certificate user (CN=bench-user, not in
// system:masters) authorized by RBAC with 1,000 RoleBindings in the
// namespace it works in (its own binding among them, named to be visited
// last), so the authorizer's scan is the cost measured. GET of one pod and
// CREATE, 64 HTTP/2 streams, as bench/api. Target: RBAC within 10 % of
// AlwaysAllow.
// Usage: node dist/bench/api/rbac.js [--json] [--runs=N] [--bindings=1000]

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { issueClientCert, PKI_FILES } from "../../src/component/pki.js";
import { startOrch } from "../../test/support/orch-process.js";
import { benchClient, benchPod as pod, closedLoop as loop, ensureNamespace, type BenchClient } from "../support/http2-client.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const PHASE_MS = 3000;
const RBAC = "/apis/rbac.authorization.orch.io/v1";

const METRICS: Metric[] = [
  { name: "GET/s (one pod, 64 streams)", unit: "req/s", better: "higher" },
  { name: "CREATE/s (64 streams)", unit: "req/s", better: "higher" },
];

async function ok(c: BenchClient, method: string, path: string, body: unknown): Promise<void> {
  const r = await c.request(method, path, body);
  if (r.status !== 201) throw new Error(`${method} ${path}: ${r.status} ${r.body.toString().slice(0, 200)}`);
}

/** A Role the bench user needs, and `count` RoleBindings in `ns`: count - 1 for other users, then the bench user's, last by name. */
async function policy(admin: BenchClient, ns: string, count: number): Promise<void> {
  const v1 = "rbac.authorization.orch.io/v1";
  await ok(admin, "POST", `${RBAC}/namespaces/${ns}/roles`, {
    apiVersion: v1, kind: "Role", metadata: { name: "pods" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "create"] }],
  });
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < count) {
      const i = next++;
      const user = i === count - 1 ? "bench-user" : `user-${i}`;
      await ok(admin, "POST", `${RBAC}/namespaces/${ns}/rolebindings`, {
        apiVersion: v1, kind: "RoleBinding", metadata: { name: `b-${String(i).padStart(5, "0")}` },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.orch.io", name: user }], roleRef: { apiGroup: "rbac.authorization.orch.io", kind: "Role", name: "pods" },
      });
    }
  }));
}

async function measure(c: BenchClient): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  out[METRICS[0]!.name] = await loop(64, PHASE_MS, async () => {
    const r = await c.request("GET", "/api/v1/namespaces/bench/pods/p-7");
    if (r.status !== 200) throw new Error(`GET ${r.status}: ${r.body.toString().slice(0, 200)}`);
  });
  out[METRICS[1]!.name] = await loop(64, PHASE_MS, async (i) => {
    const r = await c.request("POST", "/api/v1/namespaces/bench/pods", pod(`c-${i}`, i));
    if (r.status !== 201) throw new Error(`CREATE ${r.status}: ${r.body.toString().slice(0, 200)}`);
  });
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const bindingsArg = process.argv.find((a) => a.startsWith("--bindings="));
  const bindings = bindingsArg === undefined ? 1000 : Number(bindingsArg.slice("--bindings=".length));
  const report: Report = {
    title: `bench/api/rbac: a client-certificate user authorized by RBAC (${bindings} RoleBindings in its namespace) over HTTP/2`,
    comparedWith: "the admin on the same server under --authorization-mode=AlwaysAllow",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  const columns: [string, string[]][] = [["AlwaysAllow (admin)", ["--authorization-mode=AlwaysAllow"]], [`RBAC, x509 user, ${bindings} RoleBindings`, []]];
  // The columns alternate run by run, so a machine whose load drifts weighs on both alike.
  for (let run = 0; run < args.runs; run++) {
    for (const [column, flags] of columns) {
      const samples = (report.samples[column] ??= {});
      const orch = await startOrch("apiserver", flags);
      const admin = benchClient(orch);
      let user: BenchClient | undefined;
      try {
        await ensureNamespace(admin, "bench");
        await ok(admin, "POST", "/api/v1/namespaces/bench/pods", pod("p-7", 7));
        if (flags.length === 0) {
          await policy(admin, "bench", bindings);
          const ca = { cert: readFileSync(join(orch.dataDir, PKI_FILES.caCert), "utf8"), key: readFileSync(join(orch.dataDir, PKI_FILES.caKey), "utf8") };
          user = benchClient(orch, await issueClientCert(ca, "bench-user", ["bench"]));
          // The authorizer reads the watch cache: wait until the user's binding is there.
          for (let i = 0; (await user.request("GET", "/api/v1/namespaces/bench/pods/p-7")).status !== 200; i++) {
            if (i > 200) throw new Error("the bench user is never allowed");
            await new Promise((r) => setTimeout(r, 20));
          }
        }
        for (const [k, v] of Object.entries(await measure(user ?? admin))) (samples[k] ??= []).push(v);
      } finally {
        user?.close();
        admin.close();
        await orch.stop();
      }
      if (!args.json) process.stderr.write(`${column}: run ${run + 1}/${args.runs} done\n`);
    }
  }
  printReport(report, args.json);
}

await main();
