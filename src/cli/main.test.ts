import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { FlagSet, packageRoot, type FlagDecls } from "../component/index.js";
import { commands, main } from "./main.js";

const root = packageRoot();
const bin = join(root, "bin", "orch.js");
const run = promisify(execFile);

/** Runs the real launcher; resolves with status and output, whatever the status. */
async function orch(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { cwd: root });
    return { status: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** Runs main() in this process with captured output. */
async function inProcess(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const status = await main(args, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  return { status, stdout, stderr };
}

/** Subcommands that already serve until SIGINT/SIGTERM. */
const LONG_RUNNING = ["server", "apiserver", "controller-manager", "scheduler", "proxy", "cloud-controller-manager", "nodeagent"];

const NAMES = ["server", "apiserver", "controller-manager", "scheduler", "nodeagent", "proxy", "cloud-controller-manager", "images", "snapshot", "etcd", "simulate-nodes"];
/** Tools, not components: no serving flags, no ports (tested in their own files). */
const TOOLS = ["images", "snapshot", "etcd", "simulate-nodes"];
const COMPONENTS = NAMES.filter((n) => !TOOLS.includes(n));

test("orch with no arguments or --help lists every subcommand", async () => {
  assert.deepEqual(commands.map((c) => c.name), NAMES);
  for (const args of [[], ["--help"], ["-h"], ["help"]]) {
    const r = await inProcess(...args);
    assert.equal(r.status, 0);
    for (const name of NAMES) assert.match(r.stdout, new RegExp(`^ {2}${name} +\\S`, "m"), `${args.join(" ")}: ${name}`);
  }
});

test("orch --version prints the package version", async () => {
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  const r = await orch("--version");
  assert.deepEqual([r.status, r.stdout], [0, `orch v${version}\n`]);
});

test("an unknown subcommand or top-level flag exits 2", async () => {
  const a = await inProcess("frobnicate");
  assert.equal(a.status, 2);
  assert.match(a.stderr, /^orch: unknown command "frobnicate"/);
  const b = await inProcess("--bogus");
  assert.equal(b.status, 2);
  assert.match(b.stderr, /^orch: unknown flag: --bogus/);
});

test("orch apiserver --bogus exits 2 naming the flag", async () => {
  const r = await orch("apiserver", "--bogus");
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^orch apiserver: unknown flag: --bogus$/m);
  assert.equal(r.stdout, "");
});

test("orch apiserver --help exits 0 and lists its flags", async () => {
  const r = await orch("apiserver", "--help");
  assert.equal(r.status, 0);
  for (const f of ["--data-dir string", "--bind-address string", "--secure-port int", "--storage-backend string", "--etcd-servers strings",
    "--compaction-interval duration", "--heap-growth-percent int", "--feature-gates mapStringBool", "--api-group-suffix string", "-v, --v Level"]) {
    assert.ok(r.stdout.includes(f), `missing ${f}`);
  }
  assert.match(r.stdout, /\(default "\.\/\.orch"\)/);
  assert.match(r.stdout, /\(default 5m0s\)/);
});

test("every subcommand answers --help, rejects unknown flags, and runs", async () => {
  await Promise.all(COMPONENTS.map(async (name) => {
    const help = await orch(name, "--help");
    assert.equal(help.status, 0, `${name} --help: ${help.stderr}`);
    assert.match(help.stdout, new RegExp(`Usage:\\n {2}orch ${name} \\[flags\\]\\n`));
    assert.match(help.stdout, /--feature-gates/);
    assert.match(help.stdout, /-v, --v/);
    assert.match(help.stdout, /--bind-address/);
    const bogus = await orch(name, "--bogus");
    assert.equal(bogus.status, 2, `${name} --bogus`);
    assert.match(bogus.stderr, new RegExp(`^orch ${name}: unknown flag: --bogus$`, "m"));
    if (LONG_RUNNING.includes(name)) return; // they serve until a signal; see the store test below
    const plain = await inProcess(name);
    assert.equal(plain.status, 0, `${name}: ${plain.stderr}`);
    assert.match(plain.stdout, new RegExp(`^orch ${name}: `));
  }));
});

test("bad values exit 2 naming the flag and the value", async () => {
  const cases: Array<[string[], RegExp]> = [
    [["apiserver", "--secure-port=abc"], /invalid argument "abc" for "--secure-port" flag/],
    [["apiserver", "--secure-port", "70000"], /invalid argument "70000" for "--secure-port" flag: must be at most 65535/],
    [["apiserver", "--compaction-interval=5x"], /invalid argument "5x" for "--compaction-interval" flag/],
    [["apiserver", "--max-requests-inflight=-1"], /invalid argument "-1" for "--max-requests-inflight" flag: must be at least 0/],
    [["server", "--heap-growth-percent=-10"], /invalid argument "-10" for "--heap-growth-percent" flag: must be at least 0/],
    [["apiserver", "--max-mutating-requests-inflight=many"], /invalid argument "many" for "--max-mutating-requests-inflight" flag/],
    [["apiserver", "--request-timeout=-5s"], /invalid argument "-5s" for "--request-timeout" flag: must not be negative/],
    [["apiserver", "--min-request-timeout=1m"], /invalid argument "1m" for "--min-request-timeout" flag/],
    [["apiserver", "--service-cluster-ip-range=10.0.0.0/40"], /invalid argument "10.0.0.0\/40" for "--service-cluster-ip-range" flag: invalid CIDR/],
    [["apiserver", "--service-node-port-range=32767-30000"], /invalid argument "32767-30000" for "--service-node-port-range" flag: invalid port range/],
    [["apiserver", "--storage-backend=sqlite"], /invalid argument "sqlite" for "--storage-backend" flag: must be one of lmdb, etcd/],
    [["apiserver", "--storage-backend=etcd"], /--etcd-servers must be specified with --storage-backend=etcd/],
    [["apiserver", "--api-group-suffix=Not_A_Domain"], /invalid argument "Not_A_Domain" for "--api-group-suffix" flag/],
    [["apiserver", "--authorization-mode=Webhook,RBAC"], /invalid argument "Webhook,RBAC" for "--authorization-mode" flag: authorization-mode "Webhook" is not a valid mode \(supported: AlwaysAllow, Node, RBAC\)/],
    [["apiserver", "--authorization-mode=RBAC,RBAC"], /authorization-mode "RBAC" has mode specified more than once/],
    [["apiserver", "extra"], /unexpected argument "extra": orch apiserver takes no arguments/],
    [["scheduler", "--feature-gates=Nope=true"], /unrecognized feature gate: Nope/],
    [["nodeagent", "--feature-gates=NodeAgentPSI=false"], /cannot set feature gate NodeAgentPSI to false, feature is locked to true/],
    [["nodeagent", "-v", "x"], /invalid argument "x" for "-v, --v" flag/],
    [["proxy", "--metrics-bind-address=10249"], /invalid argument "10249" for "--metrics-bind-address" flag: must be host:port/],
  ];
  for (const [args, message] of cases) {
    const r = await inProcess(...args);
    assert.equal(r.status, 2, args.join(" "));
    assert.match(r.stderr, message, args.join(" "));
    assert.match(r.stderr, new RegExp(`Run 'orch ${args[0]} --help' for usage`));
  }
});

test("flags reach run(): components refuse to start without what they need, after the gate warnings", async () => {
  for (const name of ["controller-manager", "scheduler"]) {
    const noKubeconfig = await inProcess(name);
    assert.equal(noKubeconfig.status, 2, name);
    assert.match(noKubeconfig.stderr, /--kubeconfig is required/);
  }
  // A config file that is not there stops the agent before it starts (exit 2); the warning comes first.
  const ga = await inProcess("nodeagent", "--feature-gates=NodeSwap=true", "--config=/nonexistent/nodeagent.yaml");
  assert.equal(ga.status, 2);
  assert.match(ga.stderr, /orch nodeagent: warning: Setting GA feature gate NodeSwap=true/);
});

test("orch apiserver serves, says when it is ready, writes the kubeconfig, and stops cleanly on SIGTERM", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-cli-store-"));
  try {
    const child = spawn(process.execPath, [bin, "apiserver", "--data-dir", dir, "--secure-port=0", "--compaction-interval=1m"], { cwd: root });
    let stderr = "";
    let stdout = "";
    let signalled = false;
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes("ready: serving") && !signalled) {
        signalled = true;
        child.kill("SIGTERM");
      }
    });
    const status = await new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    assert.equal(status, 0, stderr);
    assert.match(stderr, /orch apiserver ready: serving https:\/\/127\.0\.0\.1:\d+ \(storage lmdb\)/);
    assert.match(stderr, /stopped/);
    assert.match(stdout, /kubectl --kubeconfig .*admin\.kubeconfig get namespaces/);
    assert.ok(existsSync(join(dir, "store.mdb")));
    assert.equal(statSync(join(dir, "admin.kubeconfig")).mode & 0o777, 0o600);

    // A damaged store stops start-up with a message naming the file.
    writeFileSync(join(dir, "store.mdb"), "not a database");
    const bad = await orch("apiserver", "--data-dir", dir);
    assert.equal(bad.status, 1);
    assert.ok(bad.stderr.includes(join(dir, "store.mdb")), bad.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("each component has its upstream default port and the common flags", () => {
  const want: Record<string, [string, number | string]> = {
    server: ["secure-port", 6443],
    apiserver: ["secure-port", 6443],
    "controller-manager": ["secure-port", 10257],
    scheduler: ["secure-port", 10259],
    nodeagent: ["port", 10250],
    proxy: ["metrics-bind-address", "127.0.0.1:10249"],
    "cloud-controller-manager": ["secure-port", 10258],
  };
  for (const command of commands.filter((c) => COMPONENTS.includes(c.name))) {
    const outcome = new FlagSet({ command: command.name, flags: command.flags as FlagDecls }).parse([]);
    assert.ok(!outcome.help);
    const values = outcome.flags.values as Readonly<Record<string, unknown>>;
    const [flagName, port] = want[command.name] as [string, number | string];
    assert.equal(values[flagName], port, command.name);
    for (const common of ["bind-address", "feature-gates", "v"]) assert.ok(common in values, `${command.name} lacks --${common}`);
    for (const entry of outcome.flags.list()) assert.ok(entry.description.length > 0, `${command.name} --${entry.name} needs a description`);
  }
});

test("the apiserver flags the storage work needs have their defaults", () => {
  const apiserver = commands.find((c) => c.name === "apiserver");
  assert.ok(apiserver);
  const outcome = new FlagSet({ command: "a", flags: apiserver.flags }).parse([]);
  assert.ok(!outcome.help);
  assert.deepEqual(
    Object.fromEntries(outcome.flags.list().map((e) => [e.name, e.text])),
    {
      "admission-control-config-file": "",
      "anonymous-auth": "true",
      "api-audiences": "[]",
      "api-group-suffix": "orch.io",
      "audit-log-maxage": "0",
      "audit-log-maxbackup": "0",
      "audit-log-maxsize": "0",
      "audit-log-path": "",
      "audit-policy-file": "",
      "authorization-mode": "[Node,RBAC]",
      "bind-address": "127.0.0.1",
      "compaction-interval": "5m0s",
      "data-dir": "./.orch",
      "disable-admission-plugins": "[]",
      "disabled-metrics": "[]",
      "encryption-provider-config": "",
      "enable-admission-plugins": "[]",
      "etcd-cafile": "",
      "etcd-certfile": "",
      "etcd-compression": "true",
      "etcd-keyfile": "",
      "etcd-servers": "[]",
      "feature-gates": "",
      "heap-growth-percent": "100",
      "inflight-queue-wait": "2s",
      "join-token-ttl": "24h0m0s",
      "max-connections": "0",
      "max-mutating-requests-inflight": "200",
      "max-requests-inflight": "400",
      "metric-resolution": "15s",
      "min-request-timeout": "1800",
      "proxy-client-cert-file": "",
      "proxy-client-key-file": "",
      "request-body-timeout": "1m0s",
      "request-timeout": "1m0s",
      "requestheader-allowed-names": "[]",
      "requestheader-client-ca-file": "",
      "secure-port": "6443",
      "service-account-extend-token-expiration": "true",
      "service-account-issuer": "[https://kubernetes.default.svc.cluster.local]",
      "service-account-jwks-uri": "",
      "service-account-key-file": "[]",
      "service-account-max-token-expiration": "0s",
      "service-account-signing-key-file": "",
      "service-cluster-ip-range": "10.96.0.0/12",
      "service-node-port-range": "30000-32767",
      "show-hidden-metrics-for-version": "",
      "storage-backend": "lmdb",
      "token-auth-file": "",
      v: "0",
      "watch-cache-memory-mb": "0",
    },
  );
});

test("bin/orch.js without a build says to build first", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-bin-"));
  try {
    mkdirSync(join(dir, "bin"));
    copyFileSync(bin, join(dir, "bin", "orch.js"));
    const r = await run(process.execPath, [join(dir, "bin", "orch.js"), "--help"]).then(
      () => ({ status: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => ({ status: err.code, stderr: err.stderr }),
    );
    assert.equal(r.status, 1);
    assert.match(r.stderr, /run npm run build first/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("docs/cli.md describes every subcommand", () => {
  const docs = readFileSync(join(root, "docs", "cli.md"), "utf8");
  for (const name of NAMES) assert.match(docs, new RegExp(`orch ${name}\\b`), name);
});
