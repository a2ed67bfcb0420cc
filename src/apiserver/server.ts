// The API server: HTTPS only, HTTP/2 (ALPN) and HTTP/1.1 on one port. On
// first start it makes its CA, serving certificate and admin token in the
// data folder and writes admin.kubeconfig; it opens the store, starts one
// watch cache per resource, makes the system namespaces, and logs one line
// when ready (/readyz answers 200 only from then on). This file is wiring:
// the stores come from storage-factory.ts, a request passes the filters
// (filters/index.ts: authentication, authorization, ...) to router.ts, and
// listener.ts takes it off the wire.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { namingFor, nodeAgentClientUser, providerName, type Naming } from "../machinery/naming.js";
import type { ApiGroupModule } from "../api/resource.js";
import type { FeatureGates, FlagEntry } from "../component/index.js";
import { componentEndpoints, componentRegistry, conditionCheck } from "../component/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { isApiError } from "../machinery/index.js";
import { WindowBudget, defaultBudgetBytes } from "../storage/cacher/index.js";
import { openStorage, startCompactor, type Compactor, type Storage, type StorageConfig } from "../storage/index.js";
import { AdmissionChain, namespaceLifecycle, type AdmissionOptions } from "./admission/index.js";
import { ensureSystemPriorityClasses, priorityAdmission } from "./admission/priority.js";
import { defaultStorageClass, persistentVolumeClaimResize, storageObjectInUseProtection } from "./admission/storage.js";
import { certificateSigners } from "./authorization/signers.js";
import { nodeRestriction } from "./admission/node-restriction.js";
import { defaultIngressClass } from "./admission/networking.js";
import { runtimeClassAdmission } from "./admission/runtime-class.js";
import { DEFAULT_POD_SECURITY, loadAdmissionConfig, podSecurity, type PodSecurityConfig } from "./admission/pod-security/index.js";
import { serviceAccountAdmission } from "./admission/service-account.js";
import { mutatingWebhooks, validatingWebhooks } from "./admission/webhooks/index.js";
import { resolveService, webhookSources, type CachedObjects } from "./admission/webhooks/sources.js";
import { validatingAdmissionPolicy } from "./admission/policy/index.js";
import { policySources } from "./admission/policy/sources.js";
import { accountLookup, storeObjects } from "./authentication/account-objects.js";
import { serviceAccountTokens, type ServiceAccountOptions } from "./authentication/service-account-options.js";
import { openIdMetadata } from "./authentication/openid-metadata.js";
import { limitRanger } from "./admission/limit-ranger.js";
import { resourceQuotaAdmission } from "./admission/resource-quota.js";
import { admissionReads } from "./admission-reads.js";
import type { LimitRange } from "../api/core/index.js";
import { ApiRegistry } from "./api-registry.js";
import { setUpAudit, type AuditConfig } from "./audit/index.js";
import { ADMIN, bootstrapTokenAuthenticator, clientCertificateAuthenticator, compose, filterChain, TokenAuthenticator, tokenFileAuthenticator, websocketTokenAuthenticator, type Authenticator, type Authorizer, type Handler, type RequestContext, type ResponseExchange } from "./filters/index.js";
import { dashboard, UI_PATH } from "./dashboard/static.js";
import { authorizersFor, defaultAuthorizationModes, rbacRules } from "./authorization/modes.js";
import { rbacEscalation } from "./authorization/escalation.js";
import { reconcileBootstrapPolicy } from "./authorization/bootstrap.js";
import { startFlowControlBootstrap } from "./flowcontrol-bootstrap.js";
import { CONNECTION_TIMEOUTS, listen, type ConnectionTimeouts, type ResetLimit } from "./listener.js";
import { Discovery } from "./handlers/discovery.js";
import { NodeAgentClient } from "./node-agents.js";
import { startMetricsApi } from "./metrics-api/index.js";
import { OpenApi } from "./handlers/openapi.js";
import type { Encoding, Incoming } from "./http/respond.js";
import { ensureCredentials, type Credentials } from "../component/pki.js";
import { SchemaDefaulter } from "./registry/defaults.js";
import { resourceOfKey, type RegistryStore } from "./registry/store.js";
import { loadEncryptionConfig, type EncryptionConfig, type PrefixTransformers } from "../storage/encryption/index.js";
import { TransformedStorage } from "../storage/transformed-storage.js";
import { AdmissionMetrics } from "./admission-metrics.js";
import { ApiServerMetrics } from "./request-metrics.js";
import { Router } from "./router.js";
import { ServiceAllocator } from "./services/allocator.js";
import { bigToIp, parseIpRange, parsePortRange } from "./services/ranges.js";
import { advertiseAddress, ensureKubernetesService, startServiceAllocator } from "./services/start.js";
import { IpAddressRecords } from "./services/ip-addresses.js";
import { startServiceCIDRs } from "./services/service-cidrs.js";
import { unlessStorageFull } from "./storage-full.js";
import { Stores } from "./storage-factory.js";
import { startCrdController } from "./crd/index.js";
import { aggregation, type Aggregator } from "./aggregation/index.js";
import { frontProxy, type AggregationOptions } from "./aggregation/front-proxy.js";
import { startComponentStatuses } from "./component-statuses.js";
import type { Service } from "../api/core/types.js";
import { authenticationGroups } from "../api/authentication/self-subject-review.js";
import { authorizationGroups } from "../api/authorization/index.js";

export interface ApiServerOptions {
  dataDir: string;
  bindAddress: string;
  /** 0 picks a free port (tests). */
  securePort: number;
  storage: Omit<StorageConfig, "dataDir" | "log">;
  compactionIntervalMs: number;
  /** Where service cluster IPs come from (default 10.96.0.0/12) and the node port range (default 30000-32767). */
  serviceClusterIPRange?: string;
  serviceNodePortRange?: string;
  featureGates: FeatureGates;
  groupSuffix?: string;
  modules: readonly ApiGroupModule[];
  log?: (line: string) => void;
  /** Log the ready line (default true); `orch server` prints its own once its node is Ready. */
  announceReady?: boolean;
  /** Bookmark cadence on watches that allow them (default 60 s, as upstream's order of magnitude). */
  bookmarkIntervalMs?: number;
  /** How long the watch cache keeps events (default 75 s, seed 000 "Resource version semantics" 4). */
  cacheWindowMs?: number;
  /** How often the node agents' /metrics/resource are scraped for metrics.k8s.io (default 15 s; metrics-server's --metric-resolution). */
  metricResolutionMs?: number;
  /** --watch-cache-memory-mb in bytes: what the watch caches' event windows may hold together (0 or unset: a quarter of the heap limit). */
  watchCacheBudgetBytes?: number;
  /** The API server's metrics registry; one from its feature gates when omitted. */
  metrics?: MetricsRegistry;
  /** The parsed command line, for /flagz. */
  flags?: { list(): readonly FlagEntry[] };
  /** Admission plugins run after the built-in ones (NamespaceLifecycle); later features and tests plug in here. */
  admission?: AdmissionOptions;
  /** Record the request metrics (default true; the benchmark turns them off to measure their cost). */
  requestMetrics?: boolean;
  /** `--token-auth-file`: a CSV of bearer tokens (filters/token-file.ts); read once at start, a malformed line stops the start. */
  tokenAuthFile?: string;
  /** `--encryption-provider-config`: EncryptionConfiguration (storage/encryption/); read once at start, anything malformed stops the start. */
  encryptionProviderConfig?: string;
  /** `--admission-control-config-file`: AdmissionConfiguration (the PodSecurity plugin's defaults and exemptions). */
  admissionControlConfigFile?: string;
  /** `--anonymous-auth` (default true). */
  anonymousAuth?: boolean;
  /** The authorizers, in place of --authorization-mode's; tests put their own here. */
  authorizers?: readonly Authorizer[];
  /** --authorization-mode: the authorizers asked in order (AlwaysAllow, RBAC); default RBAC when its kinds are served, else AlwaysAllow. */
  authorizationModes?: readonly string[];
  /** Authenticators tried after the admin token (tests give their users tokens here). */
  authenticators?: readonly Authenticator[];
  /** `--audit-policy-file`, `--audit-log-*` (audit/index.ts); without a policy file and a log path nothing is audited. */
  audit?: AuditConfig;
  /** The request limits (docs/apiserver.md, "Errors and limits"); upstream's defaults where unset. */
  limits?: RequestLimits;
  /** Service-account tokens (--service-account-*, --api-audiences) and the ServiceAccount admission step (authentication/service-account-options.ts). */
  serviceAccounts?: ServiceAccountOptions;
  /** The dashboard's built files, served at /ui/ (dashboard/static.ts): a folder (default dist/ui), or false for none. */
  dashboard?: string | false;
  /** The aggregation layer: the front proxy's credentials (--proxy-client-*, --requestheader-*) and the availability checks' interval. */
  aggregation?: AggregationOptions;
}

export interface RequestLimits {
  /** --max-requests-inflight (default 400; 0: no limit). */
  maxRequestsInflight?: number;
  /** --max-mutating-requests-inflight (default 200; 0: no limit). */
  maxMutatingRequestsInflight?: number;
  /** --inflight-queue-wait: how long a request over its in-flight limit waits for a slot (default 0: refused at once). */
  inflightQueueWaitMs?: number;
  /** --request-timeout (default 60 s; 0: none). */
  requestTimeoutMs?: number;
  /** --min-request-timeout (default 1800 s): a watch without timeoutSeconds ends in [min, 2*min). */
  minRequestTimeoutMs?: number;
  /** The listener's connection timeouts (listener.ts; constants but for tests). */
  connections?: ConnectionTimeouts;
  /** The HTTP/2 rapid-reset limit (listener.ts; a constant but for tests). */
  resets?: ResetLimit;
  /** --max-connections (0 or unset: four fifths of the open-files limit; listener.ts). */
  maxConnections?: number;
  /** --request-body-timeout (default 60 s; 0: none). */
  requestBodyTimeoutMs?: number;
}

export interface RunningApiServer {
  url: string;
  /** The dashboard's address (`${url}/ui/`), undefined when it is off or not built. */
  dashboardUrl: string | undefined;
  /** Compact the store now and tell the watch caches (what the periodic compactor does). */
  compact(revision: number): Promise<void>;
  port: number;
  kubeconfigPath: string;
  credentials: Credentials;
  storage: Storage;
  /** The backend under encryption at rest (the same as `storage` without --encryption-provider-config): values as stored. */
  backend: Storage;
  stores: Stores;
  /** The watch caches' shared memory budget (its use, peak and events shed). */
  watchCacheBudget: WindowBudget;
  metrics: MetricsRegistry;
  /** The admission chain's timing (the stable admission histograms). */
  admissionMetrics: AdmissionMetrics;
  close(): Promise<void>;
}

export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const gates = options.featureGates;
  const naming = namingFor(options.groupSuffix);
  // RBAC escalation prevention, a validating step before the caller's; it asks the authorizers, built once the stores are.
  let authorizers: readonly Authorizer[] = [];
  let rbac: ReturnType<typeof rbacRules>;
  const escalation = rbacEscalation({ rbacGroup: naming.rbacGroup, authorizers: () => authorizers, rbac: () => rbac });
  // CSR approval and signing need `approve`/`sign` on the request's signer (upstream's CertificateApproval and CertificateSigning).
  const signers = certificateSigners({ certificatesGroup: naming.certificatesGroup, authorizers: () => authorizers });
  options = { ...options, admission: { ...options.admission, validating: [escalation, signers, ...(options.admission?.validating ?? [])] } };
  // Read before anything starts: a malformed token file stops the start with its line.
  const tokenFile = options.tokenAuthFile !== undefined && options.tokenAuthFile !== "" ? tokenFileAuthenticator(options.tokenAuthFile) : undefined;
  // Read before anything starts: a malformed audit policy stops the start with what is wrong.
  const audit = setUpAudit(options.audit, naming);
  const credentials = await ensureCredentials(options.dataDir, [
    ...(options.bindAddress !== "0.0.0.0" && options.bindAddress !== "::" ? [options.bindAddress] : []),
    // The advertised address (the `kubernetes` endpoints' and the default jwks_uri's host), as upstream's self-signed certificate.
    advertiseAddress(options.bindAddress),
    // Pods reach the server as the `kubernetes` service (in-cluster clients): its names and cluster IP, as upstream's serving certificate.
    ...inClusterNames(options.serviceClusterIPRange ?? "10.96.0.0/12"),
  ], nodeAgentClientUser(naming));
  // Read before anything starts: a malformed encryption config stops the start with what is wrong.
  const encryption = options.encryptionProviderConfig ? loadEncryptionConfig(options.encryptionProviderConfig, naming.groupSuffix) : undefined;
  // Likewise the admission configuration (PodSecurity's defaults and exemptions).
  const podSecurityConfig = options.admissionControlConfigFile ? loadAdmissionConfig(options.admissionControlConfigFile, naming.groupSuffix) : DEFAULT_POD_SECURITY;
  // The keys are read (or made) before the store opens: a bad key file stops the start.
  const saTokens = serviceAccountTokens(options.serviceAccounts ?? {}, { dataDir: options.dataDir, naming, objects: storeObjects(() => stores) });
  const opened = await openStorage({ ...options.storage, dataDir: options.dataDir, log });

  const metrics = options.metrics ?? componentRegistry({ featureGates: gates });
  const admissionMetrics = new AdmissionMetrics(metrics);
  const registry = new ApiRegistry(options.modules, naming);
  const storage = encryptedAtRest(opened.store, encryption);
  // The plugins look their stores up when they run: the stores are built with the chain.
  const { admission, allocator } = serverAdmission({ options, registry, storage, stores: () => stores, timing: admissionMetrics, log, podSecurity: podSecurityConfig, naming });
  const watchCacheBudget = new WindowBudget(options.watchCacheBudgetBytes || defaultBudgetBytes());
  const stores = new Stores({ storage, resources: registry.resources, naming, defaulter: new SchemaDefaulter(registry.schemas), admission, featureGates: gates, cacheWindowMs: options.cacheWindowMs, cacheBudget: watchCacheBudget, log });
  const compactor: Compactor = startCompactor(storage, { intervalMs: options.compactionIntervalMs, log, onCompacted: (revision) => stores.compacted(revision) });
  await stores.start();
  await unlessStorageFull("system namespaces", log, () => ensureSystemNamespaces(stores.namespaces, naming), undefined);
  await unlessStorageFull("system priority classes", log, () => ensureSystemPriorityClasses(stores.priorityClasses, naming), undefined);
  await unlessStorageFull("bootstrap policy", log, () => reconcileBootstrapPolicy(stores, naming, log), undefined);
  const stopFlowControl = await startFlowControlBootstrap(stores, naming, log);
  const stopServiceAllocator = allocator ? await startServiceAllocator(allocator, { storage, log }) : () => {};
  const serviceCIDRs = allocator ? await startServiceCIDRs({ storage, naming, stores, range: allocator.ipRange.cidr, log }) : undefined;
  const componentStatuses = stores.for({ group: "", resource: "componentstatuses" });
  const stopComponentStatuses = componentStatuses ? startComponentStatuses({ store: componentStatuses, storageHealthy: () => opened.healthy(), log }) : () => {};

  const encoding: Encoding = {
    schemas: registry.schemas,
    cbor: gates.enabled("CBORServingAndStorage"),
    compression: gates.enabled("APIResponseCompression"),
    lookupType: (apiVersion, kind) => registry.schemaTypeOf(apiVersion, kind),
  };
  let ready = false;
  // The same /healthz, /livez, /readyz, /version, /metrics and z-pages as every component (seed 002).
  const endpoints = componentEndpoints({ component: "orch-apiserver", featureGates: gates, metrics, ...(options.flags ? { flags: options.flags } : {}) });
  endpoints.health.addLive(conditionCheck("etcd", () => opened.healthy(), `storage (${storage.backend}) is not reachable`));
  endpoints.health.addReady(conditionCheck("etcd-readiness", () => opened.healthy(), `storage (${storage.backend}) is not ready`));
  endpoints.health.addReady({ name: "storage-space", check: () => { const problem = opened.writeProblem(); if (problem !== undefined) throw new Error(problem); } });
  endpoints.health.addReady(conditionCheck("informer-sync", () => ready, "watch caches have not synced"));
  endpoints.health.addReady(conditionCheck("autoregister-completion", () => ready, "API groups are not all registered yet"));
  const apiMetrics = new ApiServerMetrics({ registry: metrics, storage, resources: [...stores], log });
  await apiMetrics.start();
  const agents = new NodeAgentClient(credentials.nodeAgentClient);
  const metricsApi = startMetricsApi({ stores, agents, encoding, resolutionMs: options.metricResolutionMs ?? 15_000, log });
  // The bearer tokens this server knows, for requests and for TokenReviews.
  const tokenAuthenticators = [new TokenAuthenticator(new Map([[credentials.adminToken, ADMIN]])), ...(tokenFile ? [tokenFile] : []), ...bootstrapTokens(stores, naming)];
  const openapi = new OpenApi(registry);
  // Service-account issuer discovery: jwks_uri defaults to the advertised address and the port listened on.
  let externalAddress: string | undefined;
  const oidc = openIdMetadata({ issuer: saTokens.issuer, keys: saTokens.keys, ...(options.serviceAccounts?.jwksUri ? { jwksUri: options.serviceAccounts.jwksUri } : {}) }, () => externalAddress, log);
  let aggregator: Aggregator | undefined;
  const discovery = new Discovery(registry, () => aggregator?.groups() ?? []);
  // The aggregation layer: made before custom resources are served (they get their own priorities), started once they are.
  const proxy = await frontProxy(options.dataDir, options.aggregation ?? {}, credentials.caCertPem, stores, naming, log);
  aggregator = aggregation({ registry, stores, naming, log, proxyClient: proxy.client, documents: [discovery], ...(options.aggregation?.checkIntervalMs !== undefined ? { checkIntervalMs: options.aggregation.checkIntervalMs } : {}) });
  // Custom resources: every stored definition is served before the server reports ready.
  const crds = await startCrdController({ registry, stores, documents: [discovery, openapi, ...(aggregator ? [aggregator] : [])], naming, log,
    resolveService: (namespace, name, port) => resolveService(cachedObjects(() => stores), namespace, name, port) });
  await aggregator?.start();
  authorizers = options.authorizers ?? authorizersFor(options.authorizationModes ?? defaultAuthorizationModes(stores, naming), stores, naming);
  rbac = rbacRules(stores, naming, authorizers);
  const router = new Router({
    endpoints, openapi, discovery, registry, stores, encoding, metrics: apiMetrics, agents,
    ...(metricsApi ? { metricsApi: metricsApi.api } : {}),
    ...(aggregator ? { aggregator } : {}),
    authentication: {
      groups: authenticationGroups(naming),
      reviewToken: async (token) => {
        const req = { headers: { authorization: `Bearer ${token}` } } as Incoming;
        for (const a of tokenAuthenticators) {
          const user = await a.authenticate(req);
          if (user !== undefined) return user;
        }
        return undefined;
      },
      reviewServiceAccountToken: (token, audiences) => saTokens.check(token, audiences),
      apiAudiences: saTokens.apiAudiences,
      schemas: registry.schemas, cbor: encoding.cbor,
    },
    serviceAccountTokens: saTokens,
    ...(oidc !== undefined ? { openIdMetadata: oidc } : {}),
    authorization: { groups: authorizationGroups(naming), authorizers, schemas: registry.schemas, cbor: encoding.cbor },
    watchEnv: {
      metaGroup: naming.metaGroup,
      watchList: gates.enabled("WatchList"),
      sharding: gates.enabled("ShardedListAndWatch"),
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      minRequestTimeoutMs: options.limits?.minRequestTimeoutMs ?? 1_800_000,
      initialEventsEndAnnotation: naming.initialEventsEndAnnotation,
    },
  });
  const bearerTokens = [...tokenAuthenticators, saTokens.authenticator(), ...(options.authenticators ?? [])];
  const filters = filterChain({
    // A browser's WebSocket (the dashboard's exec terminal) brings its token as a subprotocol.
    authenticators: [...bearerTokens, websocketTokenAuthenticator(bearerTokens), clientCertificateAuthenticator],
    authorizers,
    anonymous: options.anonymousAuth ?? true,
    authenticationGroup: naming.authenticationGroup,
    authorizationGroup: naming.authorizationGroup,
    metrics: options.requestMetrics !== false ? apiMetrics : undefined,
    encoding,
    log,
    inflight: {
      maxRequestsInflight: options.limits?.maxRequestsInflight ?? 400,
      maxMutatingRequestsInflight: options.limits?.maxMutatingRequestsInflight ?? 200,
      // At most a quarter of the request timeout (as API Priority and Fairness bounds its queue wait):
      // a request must still have time to be served, or be refused with a 429 its client retries.
      queueWaitMs: Math.min(options.limits?.inflightQueueWaitMs ?? 0, (options.limits?.requestTimeoutMs || 60_000) / 4),
      coordinationGroup: naming.coordinationGroup,
      nodeLeaseNamespace: naming.nodeLeaseNamespace,
    },
    requestTimeoutMs: options.limits?.requestTimeoutMs ?? 60_000,
    ...(audit !== undefined ? { audit } : {}),
  });
  const ui = options.dashboard === false ? undefined : dashboard(options.dashboard);
  const listener = await listen({
    ...(options.limits?.connections !== undefined || options.limits?.requestBodyTimeoutMs !== undefined
      ? { timeouts: { ...CONNECTION_TIMEOUTS, ...options.limits.connections, ...(options.limits.requestBodyTimeoutMs !== undefined ? { bodyMs: options.limits.requestBodyTimeoutMs } : {}) } }
      : {}),
    ...(options.limits?.maxConnections ? { maxConnections: options.limits.maxConnections } : {}),
    ...(options.limits?.resets !== undefined ? { resets: options.limits.resets } : {}),
    credentials, bindAddress: options.bindAddress, port: options.securePort,
    serve: withDashboard(ui, compose(filters, (ctx) => router.serve(ctx))),
    upgrade: compose(filters, (ctx) => router.upgrade(ctx)),
  });
  const port = listener.port;
  const advertised = advertiseAddress(options.bindAddress);
  externalAddress = `${advertised.includes(":") ? `[${advertised}]` : advertised}:${port}`;
  if (allocator) {
    await unlessStorageFull("the kubernetes service", log, () => ensureKubernetesService({ services: stores.services!, endpoints: stores.endpoints }, { allocator, address: advertiseAddress(options.bindAddress), port, log, provider: providerName(naming) }), undefined);
  }
  const host = options.bindAddress === "0.0.0.0" || options.bindAddress === "::" ? "127.0.0.1" : options.bindAddress;
  const url = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = join(options.dataDir, "admin.kubeconfig");
  writeFileSync(kubeconfigPath, kubeconfig(url, credentials), { mode: 0o600 });
  ready = true;
  if (options.announceReady !== false) log(`orch apiserver ready: serving ${url} (storage ${storage.backend}); kubeconfig ${kubeconfigPath}${ui?.built ? `; dashboard ${url}${UI_PATH}` : ""}`);

  return {
    url,
    dashboardUrl: ui?.built ? `${url}${UI_PATH}` : undefined,
    port,
    kubeconfigPath,
    credentials,
    storage,
    backend: opened.store,
    stores,
    watchCacheBudget,
    metrics,
    admissionMetrics,
    async compact(revision) {
      await storage.compact(revision);
      stores.compacted(revision);
    },
    async close() {
      ready = false;
      crds?.stop();
      aggregator?.stop();
      apiMetrics.stop();
      await metricsApi?.stop();
      agents.close();
      compactor.stop();
      stopServiceAllocator();
      serviceCIDRs?.stop();
      stopComponentStatuses();
      stopFlowControl();
      await listener.close();
      audit?.sink.close();
      stores.stop();
      await storage.close();
    },
  };
}

interface AdmissionWiring {
  readonly options: Pick<ApiServerOptions, "serviceClusterIPRange" | "serviceNodePortRange" | "admission" | "serviceAccounts">;
  readonly naming: Naming;
  readonly registry: ApiRegistry;
  readonly storage: Storage;
  readonly stores: () => Stores;
  readonly timing: AdmissionMetrics;
  readonly log: (line: string) => void;
  readonly podSecurity: PodSecurityConfig;
}

/** The built-in plugins first (NamespaceLifecycle and the service allocator where their kinds are served), then the caller's. */
function serverAdmission({ options, registry, storage, stores, timing, log, podSecurity: podSecurityConfig, naming }: AdmissionWiring): { admission: AdmissionChain; allocator: ServiceAllocator | undefined } {
  const allocator = registry.find("", "services") === undefined ? undefined : new ServiceAllocator({
    storage,
    ipRange: parseIpRange(options.serviceClusterIPRange ?? "10.96.0.0/12"),
    portRange: parsePortRange(options.serviceNodePortRange ?? "30000-32767"),
    listServices: async () => (await stores().services!.list(undefined, {})).items.map((i) => i.object as Service),
    decode: (value) => stores().services!.decode({ key: "", value, createRevision: 0, modRevision: 0 }),
    log,
    ipAddresses: registry.find(naming.networkingGroup, "ipaddresses") === undefined ? undefined : new IpAddressRecords(naming, () => stores().for({ group: naming.networkingGroup, resource: "ipaddresses" })),
  });
  // The plugins read the watch caches (admission-reads.ts), as upstream's read their informers.
  const reads = (group: string, resource: string) => admissionReads(stores().for({ group, resource }));
  const namespaceObject = async (name: string) => (await reads("", "namespaces")!.get(undefined, name)).object;
  const storageClasses = () => reads(naming.storageGroup, "storageclasses");
  // LimitRanger and ResourceQuota where their kinds are served (upstream's order: LimitRanger early, quota last).
  const limits = registry.find("", "limitranges") === undefined ? undefined : limitRanger(async (ns) => (await reads("", "limitranges")!.list(ns, {})).items.map((i) => i.object as LimitRange), naming);
  // Admission webhooks: last of each phase, configurations read from the watch caches.
  const webhooks = registry.find(naming.admissionregistrationGroup, "validatingwebhookconfigurations") === undefined
    ? undefined
    : { ...webhookSources(naming, cachedObjects(stores)), timed: timing.webhookCall };
  const runtimeClasses = registry.find(naming.nodeGroup, "runtimeclasses") !== undefined && registry.find("", "pods") !== undefined
    ? runtimeClassAdmission(naming, () => reads(naming.nodeGroup, "runtimeclasses"))
    : undefined;
  const admission = new AdmissionChain({
    mutating: [
      ...(registry.find("", "namespaces") !== undefined ? [namespaceLifecycle(namespaceObject)] : []),
      ...(limits ? [limits.mutating] : []),
      ...(options.serviceAccounts?.admission === true ? [serviceAccountAdmission({ naming, lookup: accountLookup(() => stores()) })] : []),
      priorityAdmission(() => admissionReads(stores().priorityClasses)),
      ...(allocator ? [allocator.plugin()] : []),
      ...(registry.find("", "persistentvolumeclaims") !== undefined ? [defaultStorageClass(naming, storageClasses), storageObjectInUseProtection(naming)] : []),
      ...(runtimeClasses ? [runtimeClasses.mutating] : []),
      ...(registry.find(naming.networkingGroup, "ingresses") !== undefined ? [defaultIngressClass(naming, () => reads(naming.networkingGroup, "ingressclasses"))] : []),
      ...(webhooks ? [mutatingWebhooks(webhooks)] : []),
    ],
    validating: [
      ...(runtimeClasses ? [runtimeClasses.validating] : []),
      ...(registry.find("", "persistentvolumeclaims") !== undefined ? [persistentVolumeClaimResize(storageClasses)] : []),
      // NodeRestriction: node agents write only their own Node, lease and pods (authorization/node.ts lets them in).
      nodeRestriction(naming),
      ...(registry.find("", "namespaces") === undefined || registry.find("", "pods") === undefined ? [] : [
        podSecurity({
          config: podSecurityConfig,
          keyDomain: naming.keyDomain,
          namespace: namespaceObject,
          pods: async (namespace) => (await stores().for({ group: "", resource: "pods" })!.list(namespace, {})).items.map((i) => i.object),
        }),
      ]),
      ...(limits ? [limits.validating] : []),
      ...(webhooks ? [validatingAdmissionPolicy(policySources(naming, cachedObjects(stores))), validatingWebhooks(webhooks)] : []),
      // Quota last, as upstream: only what every other step admitted is charged.
      resourceQuotaAdmission(() => reads("", "resourcequotas")),
    ],
    timing,
  }).with(options.admission ?? {});
  return { admission, allocator };
}

/** The watch caches as the webhook plugins read them (never the backend). */
function cachedObjects(stores: () => Stores): CachedObjects {
  return {
    list: async (gr) => {
      const store = stores().for(gr);
      return store === undefined ? [] : (await store.cacher.list(store.prefixFor(undefined), { mode: "Any" })).items.map((i) => i.object);
    },
    get: async (gr, namespace, name) => {
      const store = stores().for(gr);
      return store === undefined ? undefined : (await store.cacher.get(store.keyFor(namespace, name), { mode: "Any" }))?.object;
    },
    version: (gr) => stores().for(gr)?.def.versions[0],
    definitions: () => [...stores()].map((s) => s.def),
    kindResource: (group, kind) => {
      const def = [...stores()].map((s) => s.def).find((d) => d.group === group && d.kind === kind);
      return def === undefined ? undefined : { resource: { group: def.group, resource: def.resource }, namespaced: def.namespaced };
    },
  };
}

/** The dashboard's static files answer before the filter chain (they hold no data); everything else goes on. */
function withDashboard(ui: ReturnType<typeof dashboard> | undefined, next: Handler<RequestContext<ResponseExchange>>): Handler<RequestContext<ResponseExchange>> {
  if (ui === undefined) return next;
  return (ctx) => (ui.serve(ctx.req, ctx.exchange.res) ? Promise.resolve() : next(ctx));
}

/** Bootstrap tokens (`<id>.<secret>`) against the system namespace's Secrets, where Secrets are served. */
function bootstrapTokens(stores: Stores, naming: Naming): Authenticator[] {
  const secrets = stores.for({ group: "", resource: "secrets" });
  if (secrets === undefined) return [];
  return [bootstrapTokenAuthenticator(naming, async (name) => (await secrets.cacher.get(secrets.keyFor(naming.systemNamespace, name), { mode: "Any" }))?.object as never)];
}

/**
 * The store with each resource's encryption rule applied (storage/encryption/), or the store itself without a
 * config. Rules are looked up by the key's group and resource, so resources served later (custom resources) are
 * covered by wildcards too.
 */
function encryptedAtRest(store: Storage, config: EncryptionConfig | undefined): Storage {
  if (config === undefined) return store;
  const byResource = new Map<string, PrefixTransformers | undefined>();
  return new TransformedStorage(store, (key) => {
    const gr = resourceOfKey(key);
    if (gr === undefined) return undefined;
    const id = `${gr.group}/${gr.resource}`;
    if (!byResource.has(id)) byResource.set(id, config.transformersFor(gr.group, gr.resource));
    return byResource.get(id);
  });
}

/** The `kubernetes` service's DNS names and cluster IP (the range's first address), which in-cluster clients connect to. */
function inClusterNames(serviceClusterIPRange: string): string[] {
  const range = parseIpRange(serviceClusterIPRange);
  return [bigToIp(range.first, range.family), "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"];
}

/** default, <product>-system, <product>-public and <product>-node-lease exist from the first start. */
async function ensureSystemNamespaces(namespaces: RegistryStore | undefined, naming: Naming): Promise<void> {
  if (namespaces === undefined) return;
  for (const name of ["default", naming.systemNamespace, naming.publicNamespace, naming.nodeLeaseNamespace]) {
    try {
      await namespaces.create(undefined, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
    } catch (err) {
      if (!isApiError(err, "AlreadyExists")) throw err;
    }
  }
}

export function kubeconfig(url: string, credentials: Credentials): string {
  const ca = Buffer.from(credentials.caCertPem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: orch",
    "  cluster:",
    `    server: ${url}`,
    `    certificate-authority-data: ${ca}`,
    "users:",
    "- name: admin",
    "  user:",
    `    token: ${credentials.adminToken}`,
    "contexts:",
    "- name: orch",
    "  context:",
    "    cluster: orch",
    "    user: admin",
    "current-context: orch",
    "",
  ].join("\n");
}
