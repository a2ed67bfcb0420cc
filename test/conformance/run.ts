// Runs upstream's conformance suite (e2e.test v1.23.16, built by
// ../shared/tools/upstream/build.sh) against `orch server
// --api-group-suffix=k8s.io` on a fresh data folder and writes the outcome of
// every spec to docs/conformance.md (issue 17). A measurement tool, not part
// of `npm test`: a full run takes hours. scripts/conformance.sh is the entry.
//
// The specs are listed first (a ginkgo dry run with the same focus and skip),
// then split round-robin into --shards groups, each run by its own e2e.test
// process focused on exactly its specs: most of a failing spec's time is
// spent waiting for a timeout, so shards overlap those waits. (e2e.test's own
// --ginkgo.parallel.* flags need the ginkgo CLI's sync server.) [Serial] and
// [Disruptive] specs run afterwards, alone, as in ginkgo's parallel mode
// (plan.ts). A kubectl without release version variables is replaced by one
// build-kubectl.sh builds (its `kubectl version` is checked by a spec).

import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hostIPv4, startJoinedAgent, startOrch, type JoinedAgentProcess, type OrchProcess } from "../support/orch-process.js";
import { startContainerd, type Containerd } from "../support/containerd.js";
import { buildConformanceImages } from "./images.js";
import { focusFor, mergeShards, parseJUnit, type SpecOutcome } from "./junit.js";
import { hasReleaseVersion, planShards } from "./plan.js";
import { readSkips, writeReport, type RunFacts } from "./report.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const BIN = join(REPO, "bin/orch.js");
/** Outside the default 10.96.0.0/12 every other orch server on the machine uses. */
const SERVICE_RANGE = "10.220.0.0/16";
const CHAIN_PREFIX = "OCONF";

interface Options {
  e2e: string;
  /** The kubectl the suite's kubectl specs run: the suite's own version (built beside e2e.test), as upstream's CI does. */
  kubectl: string;
  upstreamSrc: string;
  focus: string;
  skipFile: string;
  focusFile?: string;
  list: boolean;
  shards: number;
  /** Nodes of the cluster: the server's own node agent, and nodes - 1 agents joined to it on this host. */
  nodes: number;
  runtime: "embedded" | "containerd";
  out: string;
  workDir: string;
  /** Two runs at once on one host need their own (their proxies would rewrite each other's chains). */
  chainPrefix: string;
  serviceRange: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    e2e: process.env["E2E_TEST"] ?? "/tmp/upstream-k8s/bin/e2e.test",
    kubectl: "",
    upstreamSrc: process.env["UPSTREAM_SRC"] ?? "/tmp/upstream-k8s/src",
    focus: "\\[Conformance\\]",
    skipFile: join(REPO, "test/conformance/skips.txt"),
    list: false,
    shards: 3,
    nodes: 2,
    runtime: "embedded",
    out: join(REPO, "docs/conformance.md"),
    workDir: mkdtempSync(join(tmpdir(), "orch-conformance-")),
    chainPrefix: CHAIN_PREFIX,
    serviceRange: SERVICE_RANGE,
  };
  for (let i = 0; i < argv.length; i++) {
    const [key, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? usage(`${key} needs a value`);
    switch (key) {
      case "--e2e": o.e2e = value(); break;
      case "--kubectl": o.kubectl = value(); break;
      case "--upstream-src": o.upstreamSrc = value(); break;
      case "--focus": o.focus = value(); break;
      case "--focus-file": o.focusFile = value(); break;
      case "--skip-file": o.skipFile = value(); break;
      case "--list": o.list = true; break;
      case "--shards": o.shards = Math.max(1, Number.parseInt(value(), 10) || usage("--shards takes a positive integer")); break;
      case "--nodes": {
        const n = value();
        if (!/^[1-9][0-9]?$/.test(n)) usage(`--nodes takes a number of nodes from 1 to 99, not "${n}"`);
        o.nodes = Number(n);
        break;
      }
      case "--runtime": {
        const r = value();
        if (r !== "embedded" && r !== "containerd") usage(`--runtime is embedded or containerd, not "${r}"`);
        o.runtime = r as Options["runtime"];
        break;
      }
      case "--out": o.out = value(); break;
      case "--work-dir": o.workDir = value(); break;
      case "--chain-prefix": o.chainPrefix = value(); break;
      case "--service-range": o.serviceRange = value(); break;
      default: usage(`unknown argument "${argv[i]}"`);
    }
  }
  if (!existsSync(o.e2e)) usage(`no e2e.test at ${o.e2e}: build it with ../shared/tools/upstream/build.sh, or give --e2e PATH`);
  // A newer kubectl prints what the suite's checks do not expect (kubectl version's fields, for one).
  if (o.kubectl === "") o.kubectl = existsSync(join(dirname(o.e2e), "kubectl")) ? join(dirname(o.e2e), "kubectl") : "kubectl";
  return o;
}

/**
 * The kubectl to run: `o.kubectl` when it reports release version variables;
 * else one built from the upstream tree with them (test/conformance/build-kubectl.sh),
 * kept under the temporary folder for later runs.
 */
function releaseKubectl(o: Options): string {
  const version = (bin: string) => { try { return execFileSync(bin, ["version", "--client"], { encoding: "utf8" }); } catch { return ""; } };
  if (hasReleaseVersion(version(o.kubectl))) return o.kubectl;
  const built = join(tmpdir(), "orch-conformance-kubectl", "kubectl");
  if (!existsSync(built) || !hasReleaseVersion(version(built))) {
    process.stdout.write(`conformance: ${o.kubectl} lacks release version variables; building one into ${built}\n`);
    execFileSync(join(REPO, "test/conformance/build-kubectl.sh"), [o.upstreamSrc, built, ...(process.env["UPSTREAM_GIT_DIR"] ? [process.env["UPSTREAM_GIT_DIR"]] : [])], { stdio: "inherit" });
  }
  return built;
}

function usage(problem: string): never {
  process.stderr.write(
    `conformance: ${problem}\nusage: scripts/conformance.sh [--list] [--focus REGEX | --focus-file FILE] [--skip-file FILE] ` +
      `[--shards N] [--nodes N] [--runtime embedded|containerd] [--e2e PATH] [--kubectl PATH] [--upstream-src DIR] [--out FILE] [--work-dir DIR] [--chain-prefix P --service-range CIDR]\n`,
  );
  process.exit(2);
}

function e2eArgs(kubeconfig: string, reportDir: string, prefix: string, kubectl: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--kubectl-path=${kubectl}`,
    "--provider=skeleton",
    `--report-dir=${reportDir}`,
    `--report-prefix=${prefix}`,
    "--ginkgo.noColor",
    "--disable-log-dump",
    "--dump-logs-on-failure=false",
  ];
}

/** The specs the focus and skip select, by a ginkgo dry run (no cluster is contacted). */
function listSpecs(o: Options, focus: string, skip: string): string[] {
  const reportDir = join(o.workDir, "list");
  mkdirSync(reportDir, { recursive: true });
  const kubeconfig = join(o.workDir, "none.kubeconfig");
  writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
  const args = [...e2eArgs(kubeconfig, reportDir, "list_", o.kubectl), "--ginkgo.dryRun", `--ginkgo.focus=${focus}`];
  if (skip !== "") args.push(`--ginkgo.skip=${skip}`);
  execFileSync(o.e2e, args, { stdio: ["ignore", "ignore", "inherit"] });
  const outcomes = readReports(reportDir, "list_");
  return outcomes.filter((s) => s.result !== "skipped").map((s) => s.name).sort();
}

function readReports(dir: string, prefix: string): SpecOutcome[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith(`junit_${prefix}`) && f.endsWith(".xml"))
    .flatMap((f) => parseJUnit(readFileSync(join(dir, f), "utf8")));
}

/**
 * Builds the images and imports them where the node agents look: each one's embedded runtime root under its data
 * folder (`dataDirs`, one per node), or each node's containerd.
 */
async function importImages(o: Options, dataDirs: string[], containerds: Containerd[]): Promise<void> {
  const dir = join(o.workDir, "images");
  const files = await buildConformanceImages(dir, o.upstreamSrc);
  for (const file of files) {
    if (o.runtime === "embedded") for (const dataDir of dataDirs) execFileSync(process.execPath, [BIN, "images", "import", "--root", join(dataDir, "nodeagent", "runtime"), file], { stdio: "inherit" });
    else for (const c of containerds) await c.importImage(file);
  }
}

/** Names of the joined nodes: the host's name (the server's node) with -2, -3, ... */
function joinedNodeNames(nodes: number, host = hostname()): string[] {
  return Array.from({ length: Math.max(0, nodes - 1) }, (_, i) => `${host.toLowerCase()}-${i + 2}`);
}

async function runShard(o: Options, server: OrchProcess, index: number, specs: string[]): Promise<void> {
  const reportDir = join(o.workDir, "reports");
  mkdirSync(reportDir, { recursive: true });
  const log = createWriteStream(join(o.workDir, `shard-${index}.log`));
  const args = [...e2eArgs(server.kubeconfig, reportDir, `shard${index}_`, o.kubectl), `--ginkgo.focus=${focusFor(specs)}`];
  const child = spawn(o.e2e, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  await new Promise<void>((resolve) => child.once("exit", () => resolve()));
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const skips = readSkips(o.skipFile);
  const focus = o.focusFile !== undefined ? focusFor(readFileSync(o.focusFile, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))) : o.focus;
  const all = listSpecs(o, o.focus, "");
  const selected = listSpecs(o, focus, focusFor(skips.map((s) => s.name)));
  if (o.list) {
    process.stdout.write(`${selected.join("\n")}\n`);
    return;
  }
  process.stdout.write(`conformance: ${selected.length} specs selected (${all.length} match ${o.focus}); work dir ${o.workDir}\n`);
  o.kubectl = releaseKubectl(o);
  const dataDir = join(o.workDir, "data");
  mkdirSync(dataDir, { recursive: true });
  // Joined nodes: data folders of their own (runtime root, pod logs, agent certificate), made now for the images.
  const joined = joinedNodeNames(o.nodes).map((name) => ({ name, dataDir: join(o.workDir, `data-${name}`) }));
  for (const j of joined) mkdirSync(j.dataDir, { recursive: true });
  // On containerd, a private one per node (as each machine has its own): an agent owns every pod of its runtime,
  // so two nodes sharing one would collect each other's containers. Each has its own bridge and subnet.
  const containerds: Containerd[] = [];
  if (o.runtime === "containerd") for (let i = 0; i < o.nodes; i++) containerds.push(await startContainerd());
  const stopContainerds = async (): Promise<void> => {
    for (const [i, c] of containerds.entries()) {
      copyFileSync(join(c.dir, "containerd.log"), join(o.workDir, `containerd-${i}.log`));
      await c.stop();
    }
  };
  const runtimeArgs = (node: number): string[] => (o.runtime === "containerd" ? [`--container-runtime-endpoint=${containerds[node]!.endpoint}`] : []);
  // The suite's service specs need the proxy: a chain prefix of its own keeps test servers' chains apart
  // (short: PREFIX-SVC-<16 characters> must stay under iptables' 29). Bound to every address, so the
  // `kubernetes` service's endpoint is the host's address, which pods reach (127.0.0.1 is their own).
  // A service range of its own: other orch servers on the machine (tests) use the default 10.96.0.0/12, and
  // whichever proxy's chain comes first in PREROUTING/OUTPUT answers for an address both have (DNS at 10.96.0.10).
  // Every image a spec may run is imported above: one that is not fails its pull (ErrImagePull names it) rather
  // than running on the host's root, whatever the server's default fallback.
  const fallback = o.runtime === "embedded" ? ["--host-root-fallback=off"] : [];
  // The v1.23 suite's ServiceAccount specs wait for every account's generated token Secret (upstream's behaviour until 1.24).
  const legacy = ["--legacy-service-account-token-generation"];
  // The node at the host's own address, as a kubelet's default: the HostPort specs bind one pod to 127.0.0.1 and
  // another to the node's InternalIP, which must differ (test servers elsewhere advertise 127.0.0.1).
  const nodeAddress = hostIPv4();
  const node = nodeAddress === undefined ? [] : [`--node-ip=${nodeAddress}`, "--nodeagent-bind-address=0.0.0.0"];
  const server = await (async () => {
    try {
      await importImages(o, [dataDir, ...joined.map((j) => j.dataDir)], containerds);
      return await startOrch("server", ["--api-group-suffix=k8s.io", `--iptables-chain-prefix=${o.chainPrefix}`, "--bind-address=0.0.0.0", `--service-cluster-ip-range=${o.serviceRange}`, ...node, ...runtimeArgs(0), ...fallback, ...legacy], { readyTimeoutMs: 120_000, dataDir });
    } catch (err) {
      await stopContainerds();
      throw err;
    }
  })();
  // More nodes (specs such as DaemonSet rollback need two schedulable ones): `orch server --join` on this host,
  // as a second machine joins, each with its own data folder and free port, at the host's address as the first.
  // No proxy of their own (the server's programs this host's iptables for every pod on the shared bridge);
  // pod addresses come from the one address book of the host's pod bridge, so they never collide.
  const agents: JoinedAgentProcess[] = [];
  const started = new Date();
  // The commit of the code that runs, read now: the checkout may move on during a run of an hour.
  const commit = execFileSync("git", ["-C", REPO, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  try {
    const joinToken = readFileSync(join(dataDir, "join.token"), "utf8").trim();
    for (const [i, j] of joined.entries()) {
      const join_ = ["--join", server.url, "--token", joinToken, "--disable-proxy", ...runtimeArgs(i + 1), ...fallback];
      const agentArgs = ["--nodeagent-port=0", ...(nodeAddress === undefined ? ["--nodeagent-bind-address=127.0.0.1", "--node-ip=127.0.0.1"] : node)];
      agents.push(await startJoinedAgent(join_, j.name, { dataDir: j.dataDir, agentArgs, readyTimeoutMs: 120_000 }));
      process.stdout.write(`conformance: node ${j.name} joined\n`);
    }
    const { parallel, serial } = planShards(selected, o.shards);
    await Promise.all(parallel.map((specs, i) => runShard(o, server, i, specs)));
    if (serial.length > 0) await runShard(o, server, parallel.length, serial);
  } finally {
    for (const [i, a] of agents.entries()) {
      writeFileSync(join(o.workDir, `orch-node-${joined[i]!.name}.log`), a.output());
      await a.stop();
    }
    writeFileSync(join(o.workDir, "orch-server.log"), server.output());
    await server.stop();
    // The proxy leaves its rules behind on exit (as kube-proxy); ours would keep answering for our service range.
    execFileSync(process.execPath, [BIN, "proxy", "--cleanup", `--iptables-chain-prefix=${o.chainPrefix}`], { stdio: "inherit" });
    await stopContainerds();
  }
  const outcomes = mergeShards(readReports(join(o.workDir, "reports"), "shard")).filter((s) => selected.includes(s.name));
  const facts: RunFacts = {
    date: started,
    minutes: (Date.now() - started.getTime()) / 60_000,
    commit,
    // `e2e.test --version` prints the bare version (v1.23.16); older builds print a version.Info.
    e2eVersion: ((v: string) => /GitVersion:"([^"]+)"/.exec(v)?.[1] ?? /^v\d+\.\d+\.\d+\S*/.exec(v.trim())?.[0] ?? "")(execFileSync(o.e2e, ["--version"], { encoding: "utf8" })),
    runtime: o.runtime,
    focus,
    total: all.length,
  };
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, writeReport(facts, outcomes, skips, selected));
  const passed = outcomes.filter((s) => s.result === "passed").length;
  process.stdout.write(`conformance: ${passed} of ${selected.length} selected specs passed; report in ${o.out}, logs in ${o.workDir}\n`);
}

await main();
