// The flags of `orch apiserver`, which `orch server` takes too. Apart from the
// command (apiserver.ts) so that the process code (apiserver-process.ts) can
// type its parsed flags without importing the command that runs it.

import { baseFlags, flag, secureServingFlags } from "../component/index.js";
import { parseIpRange, parsePortRange } from "../apiserver/services/ranges.js";

const GENERIC = "Generic flags";
const STORAGE = "Storage flags";
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/** The API server's flags; `orch server` takes the same ones. */
export const apiserverFlags = {
  "data-dir": flag.string({
    section: GENERIC,
    default: "./.orch",
    description: "Directory for orch's state: the embedded store, the generated CA and certificates, and admin.kubeconfig.",
  }),
  "api-group-suffix": flag.string({
    section: GENERIC,
    default: "orch.io",
    description:
      "Suffix of the product-derived names (API groups, label and annotation keys, the Protobuf media type); " +
      "k8s.io presents upstream's names to unmodified upstream clients.",
    check: (v) => (DNS_SUBDOMAIN.test(v) ? undefined : "must be a DNS subdomain such as orch.io"),
  }),
  "storage-backend": flag.oneOf({
    section: STORAGE,
    choices: ["lmdb", "etcd"],
    default: "lmdb",
    description: "The storage backend: lmdb (embedded, under --data-dir) or etcd (at --etcd-servers).",
  }),
  "etcd-servers": flag.strings({
    section: STORAGE,
    description: "List of etcd servers to connect with (scheme://ip:port), comma separated; for --storage-backend=etcd.",
  }),
  "compaction-interval": flag.duration({
    section: STORAGE,
    default: "5m",
    check: (ms) => (ms < 0 ? "must not be negative" : undefined),
    description: "The interval of compaction requests. If 0, the compaction request from the API server is disabled.",
  }),
  "service-cluster-ip-range": flag.string({
    section: GENERIC,
    default: "10.96.0.0/12",
    description: "A CIDR notation IP range from which to assign service cluster IPs. It must not overlap with any IP ranges assigned to nodes or pods.",
    check: (v) => { try { parseIpRange(v); return undefined; } catch (err) { return (err as Error).message; } },
  }),
  "service-node-port-range": flag.string({
    section: GENERIC,
    default: "30000-32767",
    description: "A port range to reserve for services with NodePort visibility. Example: '30000-32767'. Inclusive at both ends of the range.",
    check: (v) => { try { parsePortRange(v); return undefined; } catch (err) { return (err as Error).message; } },
  }),
  "audit-policy-file": flag.string({
    section: "Audit flags",
    description: "Path to the file that defines the audit policy configuration (audit.k8s.io/v1 Policy, YAML or JSON).",
  }),
  "audit-log-path": flag.string({
    section: "Audit flags",
    description: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out.",
  }),
  "audit-log-maxsize": flag.int({
    section: "Audit flags",
    min: 0,
    description: "The maximum size in megabytes of the audit log file before it gets rotated (0: 100).",
  }),
  "audit-log-maxage": flag.int({
    section: "Audit flags",
    min: 0,
    description: "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.",
  }),
  "audit-log-maxbackup": flag.int({
    section: "Audit flags",
    min: 0,
    description: "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.",
  }),
  ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 6443 }),
  ...baseFlags(),
} as const;
