// `orch simulate-nodes`: N nodes whose agent is this one process (src/simulator),
// against any API server (orch, or upstream's with the k8s.io naming table,
// read from the server): Node objects, lease heartbeats, node status, and the
// pods bound to them moved through the stages of --stages (kwok's idea).

import { readFileSync } from "node:fs";
import { flag } from "../component/index.js";
import { loadKubeconfig, namingOfServer, RestClient, type ClientConfig } from "../client/index.js";
import { isDNS1123Subdomain } from "../machinery/index.js";
import { DEFAULT_STAGES, MAX_NODES, NodeSimulator, parseStages, type Stages } from "../simulator/index.js";
import { defineCommand } from "./command.js";

const GENERIC = "Generic flags";
const NODES = "Node flags";

export const command = defineCommand({
  name: "simulate-nodes",
  summary: "simulates many nodes in one process (heartbeats, status, pods Running)",
  description:
    "orch simulate-nodes registers --count nodes whose agent is this process: each renews its lease every 10 s and reports its status " +
    "every 5 min, and the pods bound to them go Running (an address from the node's /24, containers ready), Succeeded when a stage or the pod's " +
    "simulate-nodes.orch.io/succeed-after annotation says so, and are deleted with grace 0 once marked for deletion. One watch of all bound pods, " +
    "writes through two bounded queues (nodes' and pods'). Works against orch and upstream's kube-apiserver.",
  flags: {
    count: flag.int({ section: NODES, default: 0, min: 0, max: MAX_NODES, description: `Number of nodes to simulate (1 to ${MAX_NODES}; required).` }),
    "name-prefix": flag.string({ section: NODES, default: "sim-node-", description: "Node names are this prefix followed by the node's index (sim-node-0, sim-node-1, ...)." }),
    stages: flag.string({ section: NODES, description: "A JSON or YAML file of pod stage delays: podRunning, podSucceeded, podDelete, each { delay, jitter } as Go durations (see docs/simulate-nodes.md)." }),
    "node-cpu": flag.string({ section: NODES, default: "32", description: "Capacity and allocatable cpu of each node." }),
    "node-memory": flag.string({ section: NODES, default: "256Gi", description: "Capacity and allocatable memory of each node." }),
    "node-pods": flag.string({ section: NODES, default: "110", description: "Capacity and allocatable pods of each node (at most 253: one /24 of pod addresses per node)." }),
    concurrency: flag.int({ section: GENERIC, default: 32, min: 1, max: 1024, description: "Pod writes (status, deletion) to the API server in flight at most." }),
    "node-concurrency": flag.int({ section: GENERIC, default: 16, min: 1, max: 1024, description: "Node writes (registration, lease renewals, status) in flight at most, in slots of their own so heartbeats never wait for pod writes." }),
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file naming the API server and credentials (or --server and --token)." }),
    server: flag.string({ section: GENERIC, description: "The API server's URL, https://HOST:PORT (with --token)." }),
    token: flag.string({ section: GENERIC, description: "Bearer token for --server.", sensitive: true }),
    "certificate-authority": flag.string({ section: GENERIC, description: "CA certificate file the --server's certificate must chain to." }),
    "insecure-skip-tls-verify": flag.bool({ section: GENERIC, default: false, description: "With --server: accept any server certificate." }),
  },
  validate(flags) {
    const count = flags.get("count");
    if (count < 1) return "--count is required: the number of nodes to simulate (at least 1)";
    const kubeconfig = flags.get("kubeconfig");
    const server = flags.get("server");
    if (kubeconfig && server) return "--kubeconfig and --server are mutually exclusive";
    if (!kubeconfig && !server) return "one of --kubeconfig or --server (with --token) is required";
    if (server && !flags.get("token")) return "--server needs --token";
    if (!server && (flags.get("token") || flags.get("certificate-authority") || flags.get("insecure-skip-tls-verify"))) return "--token, --certificate-authority and --insecure-skip-tls-verify go with --server";
    if (server) {
      let url: URL;
      try {
        url = new URL(server);
      } catch {
        return `--server: invalid URL "${server}"`;
      }
      if (url.protocol !== "https:") return `--server must be an https:// URL (got "${server}")`;
    }
    const prefix = flags.get("name-prefix");
    if (isDNS1123Subdomain(`${prefix}${count - 1}`).length > 0) return `--name-prefix "${prefix}" does not make valid node names: lower case letters, digits, '-' and '.', starting with a letter or digit`;
    const pods = Number(flags.get("node-pods"));
    if (!Number.isInteger(pods) || pods < 1 || pods > 253) return `--node-pods must be a whole number from 1 to 253 (got "${flags.get("node-pods")}")`;
    const stages = flags.get("stages");
    if (stages) {
      try {
        parseStages(readFileSync(stages, "utf8"), stages);
      } catch (err) {
        return (err as Error).message;
      }
    }
    return undefined;
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    const stagesFile = flags.get("stages");
    const stages: Stages = stagesFile ? parseStages(readFileSync(stagesFile, "utf8"), stagesFile) : DEFAULT_STAGES;
    let config: ClientConfig;
    if (flags.get("kubeconfig")) config = loadKubeconfig(flags.get("kubeconfig"));
    else {
      const ca = flags.get("certificate-authority");
      config = { server: flags.get("server"), token: flags.get("token"), ...(ca ? { ca: readFileSync(ca, "utf8") } : {}), ...(flags.get("insecure-skip-tls-verify") ? { insecureSkipTlsVerify: true } : {}) };
    }
    const client = new RestClient(config, { userAgent: "orch-simulate-nodes" });
    try {
      const naming = await namingOfServer(client);
      const count = flags.get("count");
      const simulator = new NodeSimulator({
        client,
        naming,
        count,
        namePrefix: flags.get("name-prefix"),
        stages,
        concurrency: flags.get("concurrency"),
        nodeConcurrency: flags.get("node-concurrency"),
        shape: { cpu: flags.get("node-cpu"), memory: flags.get("node-memory"), pods: flags.get("node-pods") },
        log: (line) => log(`${context.command}: ${line}`),
      });
      log(`${context.command}: registering ${count} nodes on ${config.server} (naming ${naming.groupSuffix})`);
      const started = Date.now();
      const report = setInterval(() => {
        const s = simulator.snapshot();
        log(`${context.command}: ${s.nodes} nodes, ${s.leaseWrites} lease writes, ${s.podsRunning} pods started, ${s.podsSucceeded} succeeded, ${s.podsDeleted} deleted, ${s.writesPending} writes pending, ${s.writesFailed} failed`);
      }, 30_000);
      report.unref();
      try {
        await simulator.run(context.signal, () => log(`${context.command}: ready: ${count} nodes simulated (${flags.get("name-prefix")}0…${count - 1}) in ${((Date.now() - started) / 1000).toFixed(1)} s`));
      } finally {
        clearInterval(report);
      }
      log(`${context.command}: stopped`);
      return 0;
    } finally {
      client.close();
    }
  },
});
