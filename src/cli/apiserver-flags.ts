// The flags of `orch apiserver`, which `orch server` takes too. Apart from the
// command (apiserver.ts) so that the process code (apiserver-process.ts) can
// type its parsed flags without importing the command that runs it.

import { existsSync } from "node:fs";
import { baseFlags, flag, secureServingFlags } from "../component/index.js";
import { parseIpRange, parsePortRange } from "../apiserver/services/ranges.js";
import { AUTHORIZATION_MODES, checkAuthorizationModes } from "../apiserver/authorization/modes.js";
import { checkJwksUri } from "../apiserver/authentication/openid-metadata.js";
import { checkIssuers, checkOptionalAdmissionPlugins, DEFAULT_SERVICE_ACCOUNT_ISSUER } from "../apiserver/authentication/service-account-options.js";

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
  "etcd-cafile": flag.string({ section: STORAGE, description: "SSL Certificate Authority file used to secure etcd communication (https:// --etcd-servers)." }),
  "etcd-certfile": flag.string({ section: STORAGE, description: "SSL certification file used to secure etcd communication." }),
  "etcd-keyfile": flag.string({ section: STORAGE, description: "SSL key file used to secure etcd communication." }),
  "etcd-compression": flag.bool({
    section: STORAGE,
    default: true,
    description: "Store values in etcd deflate-compressed with the server's dictionary (a pod takes about a quarter of its JSON); values encrypted at rest are stored as they are. Compressed values are read either way; turn it off while API servers older than this flag share the etcd, as they cannot read them.",
  }),
  "compaction-interval": flag.duration({
    section: STORAGE,
    default: "5m",
    check: (ms) => (ms < 0 ? "must not be negative" : undefined),
    description: "The interval of compaction requests. If 0, the compaction request from the API server is disabled.",
  }),
  "heap-growth-percent": flag.int({
    section: GENERIC,
    default: 100,
    min: 0,
    max: 1000,
    description:
      "How far each heap of the process may grow past its live objects before a full garbage collection, in percent (as Go's GOGC: 100 lets it double). " +
      "Lower uses less memory and more CPU; 0 leaves V8's adaptive rule, which let heaps reach 2-4 times their live objects at scale.",
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
  "metric-resolution": flag.duration({
    section: GENERIC,
    default: "15s",
    check: (ms) => (ms < 1000 ? "must be at least 1s" : undefined),
    description: "How often the node agents' /metrics/resource are scraped for the metrics.k8s.io API (kubectl top, HorizontalPodAutoscalers), as metrics-server's --metric-resolution.",
  }),
  "join-token-ttl": flag.duration({
    section: "Authentication flags",
    default: "24h",
    description:
      "Lifetime of the bootstrap token written at every start into DATA_DIR/join.token (a Secret bootstrap-token-<id> in the system namespace): " +
      "joining nodes present it only to request their node certificate. Expired tokens are deleted by the controller manager; 0 never expires.",
  }),
  "anonymous-auth": flag.bool({
    section: "Authentication flags",
    default: true,
    description:
      "Enables anonymous requests to the public paths (health, /version), which pass as system:anonymous in group system:unauthenticated. " +
      "When false, every request without a credential the server knows is answered 401.",
  }),
  "token-auth-file": flag.string({
    section: "Authentication flags",
    description: "If set, the file that will be used to secure the secure port of the API server via token authentication: CSV lines token,user,uid,\"group1,group2\".",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
  }),
  "service-account-signing-key-file": flag.string({
    section: "Authentication flags",
    description:
      "Path to the file that contains the current private key of the service account token issuer (PEM, RSA or ECDSA). " +
      "Default: sa.key in --data-dir, an ECDSA P-256 key made at first start.",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
  }),
  "service-account-key-file": flag.strings({
    section: "Authentication flags",
    description:
      "File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. " +
      "The specified file can contain multiple keys, and the flag can be specified multiple times with different files. " +
      "The signing key's public half always verifies.",
    check: (v) => v.find((f) => !existsSync(f)) === undefined ? undefined : `${v.find((f) => !existsSync(f))}: no such file`,
  }),
  "service-account-issuer": flag.strings({
    section: "Authentication flags",
    default: [DEFAULT_SERVICE_ACCOUNT_ISSUER],
    description:
      "Identifier of the service account token issuer. The issuer will assert this identifier in \"iss\" claim of issued tokens. " +
      "When this flag is specified multiple times, the first is used to generate tokens and all are used to determine which issuers are accepted.",
    check: checkIssuers,
  }),
  "service-account-jwks-uri": flag.string({
    section: "Authentication flags",
    description:
      "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration. " +
      "This flag is useful if the discovery doc and key set are served to relying parties from a URL other than the API server's external " +
      "(as auto-detected or overridden with external-hostname). Only valid if the ServiceAccountIssuerDiscovery feature gate is enabled.",
    check: checkJwksUri,
  }),
  "api-audiences": flag.strings({
    section: "Authentication flags",
    description:
      "Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. " +
      "If not set, the --service-account-issuer values are used.",
  }),
  "service-account-max-token-expiration": flag.duration({
    section: "Authentication flags",
    default: 0,
    check: (ms) => (ms !== 0 && (ms < 3_600_000 || ms > 2 ** 32 * 1000) ? "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds" : undefined),
    description:
      "The maximum validity duration of a token created by the service account token issuer. If an otherwise valid TokenRequest with a validity duration " +
      "larger than this value is requested, a token will be issued with a validity duration of this value (0: no maximum).",
  }),
  "service-account-extend-token-expiration": flag.bool({
    section: "Authentication flags",
    default: true,
    description:
      "Turns on projected service account expiration extension during token generation, which helps safe transition from legacy token to bound service " +
      "account token feature. If this flag is enabled, admission injected tokens would be extended up to 1 year to prevent unexpected failure during " +
      "transition, ignoring value of service-account-max-token-expiration.",
  }),
  "enable-admission-plugins": flag.strings({
    section: "Admission flags",
    description:
      "Admission plugins to turn on beside the default ones (NamespaceLifecycle, Priority, ServiceAllocation). Of the optional ones orch has ServiceAccount, " +
      "which `orch server` turns on by default; `orch apiserver` alone needs the controller manager's default ServiceAccounts and CA configmaps before it can.",
    check: checkOptionalAdmissionPlugins,
  }),
  "disable-admission-plugins": flag.strings({
    section: "Admission flags",
    description: "Admission plugins to turn off (ServiceAccount).",
    check: checkOptionalAdmissionPlugins,
  }),
  "authorization-mode": flag.strings({
    section: "Authorization flags",
    default: ["Node", "RBAC"],
    description:
      `Ordered list of plug-ins to do authorization on secure port. Comma separated list of: ${AUTHORIZATION_MODES.join(",")}. ` +
      "Node lets a node agent (user system:node:NAME, group system:nodes) read what the pods bound to it use and write its own objects (with NodeRestriction admission); " +
      "The first that allows a request lets it through; under RBAC the admin (group system:masters) may do everything and the bootstrap roles are reconciled at start.",
    check: checkAuthorizationModes,
  }),
  "max-requests-inflight": flag.int({
    section: GENERIC,
    default: 400,
    min: 0,
    description: "The maximum number of non-mutating requests in flight (watches and other long-running requests not counted); a zero value disables the limit completely.",
  }),
  "max-mutating-requests-inflight": flag.int({
    section: GENERIC,
    default: 200,
    min: 0,
    description: "The maximum number of mutating requests in flight; a zero value disables the limit completely.",
  }),
  "inflight-queue-wait": flag.duration({
    section: GENERIC,
    default: "2s",
    description:
      "How long a request over --max-requests-inflight or --max-mutating-requests-inflight waits, first come first served, for a slot before it is answered 429 " +
      "(at most as many wait as the limit allows in flight); 0 refuses it at once, as upstream's max-in-flight filter.",
  }),
  "request-timeout": flag.duration({
    section: GENERIC,
    default: "1m",
    check: (ms) => (ms < 0 ? "must not be negative" : undefined),
    description: "An optional field indicating the duration a handler must keep a request open before timing it out (504). This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests; 0 disables it.",
  }),
  "max-connections": flag.int({
    section: GENERIC,
    default: 0,
    min: 0,
    description: "The most open client connections served in full; the next 64 serve only /healthz, /livez and /readyz (anything else 429, then the connection closes), and beyond those new connections are closed at once. 0: four fifths of the open-files limit.",
  }),
  "request-body-timeout": flag.duration({
    section: GENERIC,
    default: "1m",
    check: (ms) => (ms < 0 ? "must not be negative" : undefined),
    description: "How long a request body may take to arrive once the handler reads it; a slower one is dropped with its connection (HTTP/1.1) or stream (HTTP/2). 0 disables it.",
  }),
  "watch-cache-memory-mb": flag.int({
    section: GENERIC,
    default: 0,
    min: 0,
    description: "The memory, in MiB, the watch caches' event windows may hold together (estimated at three times the stored bytes); above it the oldest events go first and watches asking for them get 410 Expired. 0: a quarter of the JavaScript heap limit.",
  }),
  "min-request-timeout": flag.int({
    section: GENERIC,
    default: 1800,
    min: 0,
    description: "An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load.",
  }),
  "encryption-provider-config": flag.string({
    section: STORAGE,
    description: "The file containing configuration for encryption providers to be used for storing secrets in etcd (EncryptionConfiguration, apiserver.config.k8s.io/v1 or apiserver.config.<suffix>/v1).",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
  }),
  "admission-control-config-file": flag.string({
    section: GENERIC,
    description: "File with admission control configuration (AdmissionConfiguration; its PodSecurity plugin's PodSecurityConfiguration sets the cluster default levels and exemptions).",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
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
  "proxy-client-cert-file": flag.string({
    section: "Aggregation flags",
    description:
      "Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request (proxying to extension API servers). " +
      "Default: front-proxy-client.crt in --data-dir, made at first start with its CA front-proxy-ca.crt.",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
  }),
  "proxy-client-key-file": flag.string({
    section: "Aggregation flags",
    description: "Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request (with --proxy-client-cert-file).",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
  }),
  "requestheader-client-ca-file": flag.string({
    section: "Authentication flags",
    description:
      "Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers; " +
      "published to extension API servers in the extension-apiserver-authentication ConfigMap. Default: front-proxy-ca.crt in --data-dir when the proxy client certificate is the one made there.",
    check: (v) => (v === "" || existsSync(v) ? undefined : `${v}: no such file`),
  }),
  "requestheader-allowed-names": flag.strings({
    section: "Authentication flags",
    description:
      "List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed. " +
      "Default: front-proxy-client when the proxy client certificate is the one made in --data-dir.",
  }),
  ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 6443 }),
  ...baseFlags(),
} as const;
