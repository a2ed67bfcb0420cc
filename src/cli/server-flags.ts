// The flags of `orch server`: the API server's, the controller manager's and
// signing ones, and the server's own (node, HA). Apart from server.ts so the
// control loops (server-loops.ts, also run on their own thread) can read them
// without importing the command.

import { flag, type ParsedFlags } from "../component/index.js";
import { apiserverFlags } from "./apiserver-flags.js";
import { controllerFlags, credentialFlags, signingFlags } from "./controller-flags.js";
import { proxyRuleFlags } from "./proxy.js";

const NODE = "Node flags";
const HA = "HA control plane flags";

/** The port flag of a part the server runs beside the API server (its upstream port by default). */
function partPortFlag(part: string, port: number) {
  return flag.int({
    section: NODE, default: port, min: -1, max: 65535,
    description: `Port of the ${part}'s HTTPS endpoints (/healthz, /metrics, /statusz...) on --bind-address; 0 picks a free one, -1 serves none.`,
  });
}

export const serverFlags = {
  ...apiserverFlags,
  ...controllerFlags,
  ...signingFlags,
  ...credentialFlags(true),
  "node-name": flag.string({ section: NODE, description: "Name of this machine's node (default: the host name, lower-cased)." }),
  "container-runtime-endpoint": flag.string({
    section: NODE,
    description: "CRI socket of the container runtime (unix:///run/containerd/containerd.sock); empty runs the embedded runtime.",
  }),
  join: flag.string({ section: NODE, description: "Join the cluster whose API server is at this URL: run only a node agent (needs --token)." }),
  token: flag.string({ section: NODE, description: "For --join: the server's DATA_DIR/join.token (pins the cluster's CA), or a plain bearer token with --certificate-authority.", sensitive: true }),
  "certificate-authority": flag.string({ section: NODE, description: "The cluster's CA certificate for --join with a plain token (the server's DATA_DIR/ca.crt)." }),
  kubeconfig: flag.string({ section: NODE, description: "Join the cluster this kubeconfig names: run only a node agent." }),
  "nodeagent-port": flag.int({
    section: NODE, default: 10250, min: 0, max: 65535,
    description: "Port of the node agent's HTTPS endpoints (/containerLogs for kubectl logs, /healthz, /metrics...); 0 picks a free one, which the Node advertises.",
  }),
  "nodeagent-bind-address": flag.string({ section: NODE, default: "0.0.0.0", description: "Address of the node agent's HTTPS endpoints; the API server reaches them at the Node's InternalIP." }),
  "nodeagent-config": flag.string({ section: NODE, description: "A NodeAgentConfiguration file (as `orch nodeagent --config`) for the node agent; the server's own paths, port and DNS still win." }),
  "node-ip": flag.string({ section: NODE, description: "The node's InternalIP, where the API server reaches the agent (default: the host's first non-loopback IPv4 address)." }),
  "controller-manager-port": partPortFlag("controller manager", 10257),
  "scheduler-port": partPortFlag("scheduler", 10259),
  "disable-agent": flag.bool({ section: NODE, default: false, description: "Run no node agent here: a control plane only, for nodes that join from other machines." }),
  "disable-scheduler": flag.bool({ section: NODE, default: false, description: "Run no scheduler (pods stay unbound unless something else binds them)." }),
  "leader-elect": flag.bool({
    section: NODE, default: true,
    description: "Take the controller manager's and the scheduler's leases before acting, so an orch controller-manager or orch scheduler started beside this server (or another server on the same etcd) never acts at once with it.",
  }),
  "control-loops-thread": flag.bool({
    section: NODE, default: false,
    description: "Run the controller manager and the scheduler on a second thread of the process, so the API server keeps a core of its own (faster; more memory: a second heap and cache copies). Default: on when storing in etcd (--storage-backend=etcd, --cluster-init, --control-plane), where one thread does not keep up at scale; off on the embedded store.",
  }),
  "disable-proxy": flag.bool({ section: NODE, default: false, description: "Run no service proxy: service addresses are not programmed on this machine (two servers on one host must not both run one with the same --iptables-chain-prefix)." }),
  ...proxyRuleFlags(),
  "cluster-domain": flag.string({ section: NODE, default: "cluster.local", description: "The cluster's DNS domain: pods search <namespace>.svc.<domain>, svc.<domain> and <domain>." }),
  "cluster-dns-port": flag.int({ section: NODE, default: 0, description: "Port of the built-in cluster DNS server on this node's address (0: a free one; pods reach it through the orch-dns service's address)." }),
  "disable-dns": flag.bool({ section: NODE, default: false, description: "Run no cluster DNS server (pods use the host's resolvers). It needs the proxy, so --disable-proxy turns it off too." }),
  "cluster-init": flag.bool({
    section: HA, default: false,
    description: "Run a local etcd member (a new cluster; DATA_DIR/etcd) and store in it: the first server of an HA control plane, which others join with --join URL --control-plane --token \"$(cat DATA_DIR/server.token)\".",
  }),
  "control-plane": flag.bool({
    section: HA, default: false,
    description: "With --join: join as a control-plane member (a new etcd member, an API server, leader-elected controllers and scheduler, and a node agent); --token is the first server's DATA_DIR/server.token.",
  }),
  "etcd-client-port": flag.int({ section: HA, default: 2379, min: 0, max: 65535, description: "Client port of the local etcd member (--cluster-init, --control-plane); when the default is in use a free port is taken and the ready line names it." }),
  "etcd-peer-port": flag.int({ section: HA, default: 2380, min: 0, max: 65535, description: "Peer port of the local etcd member; when the default is in use a free port is taken." }),
  "advertise-address": flag.string({ section: HA, description: "The address the other control-plane members and joined agents reach this server's etcd member and API server at (default: --node-ip, else the host's first non-loopback IPv4 address)." }),
  "host-root-fallback": flag.oneOf({
    section: NODE,
    default: "marked",
    choices: ["marked", "any", "off"],
    description: "The embedded runtime's fallback for an image it cannot get: run the container on the host's root file system (masked: the agent's and server's data, credentials, /proc/kcore and the like). marked: only pods annotated orch.io/host-root: \"true\" (Pod Security counts them as privileged); any: every pod; off: the pull fails.",
  }),
  "registry-config": flag.string({
    section: NODE,
    description: "A registries file (k3s's registries.yaml: mirrors per registry, credentials and TLS per host) for the embedded runtime's pulls; default DATA_DIR/registries.yaml when it exists (docs/nodeagent.md, \"Registry mirrors and credentials\").",
  }),
  "stop-pods-on-exit": flag.bool({
    section: NODE,
    default: false,
    description: "On Ctrl-C or SIGTERM, stop the containers of every pod of this node. By default they keep running and the next orch server with the same --data-dir re-adopts them.",
  }),
};

export type ServerFlags = ParsedFlags<typeof serverFlags>;
