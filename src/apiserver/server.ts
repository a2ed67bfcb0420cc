// The API server: HTTPS only, HTTP/2 (ALPN) and HTTP/1.1 on one port. On
// first start it makes its CA, serving certificate and admin token in the
// data folder and writes admin.kubeconfig; it opens the store, starts one
// watch cache per resource, makes the system namespaces, and logs one line
// when ready (/readyz answers 200 only from then on).

import { createSecureServer, type Http2SecureServer } from "node:http2";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { namingFor, type Naming } from "../api/naming.js";
import type { ApiGroupModule } from "../api/resource.js";
import type { FeatureGates, FlagEntry } from "../component/index.js";
import { componentEndpoints, componentRegistry, conditionCheck, isPublicPath, rawReply } from "../component/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { badRequest, isApiError, pathNotFound, statusFromError, unauthorized, type ApiObject } from "../machinery/index.js";
import { openStorage, startCompactor, type Compactor, type Storage, type StorageConfig } from "../storage/index.js";
import { CachedStorage } from "../storage/cacher/index.js";
import { AdmissionChain, namespaceLifecycle, type AdmissionOptions } from "./admission/index.js";
import { ensureSystemPriorityClasses, priorityAdmission } from "./admission/priority.js";
import { ApiRegistry } from "./api-registry.js";
import { Discovery } from "./handlers/discovery.js";
import { handleResource } from "./handlers/resource.js";
import { handlePodLog } from "./handlers/pod-log.js";
import { CONNECT_SUBRESOURCES, proxyPodStream } from "./handlers/pod-exec.js";
import { NodeAgentClient } from "./node-agents.js";
import { OpenApi } from "./handlers/openapi.js";
import { sendError, sendJson, type Encoding, type Incoming, type Outgoing } from "./http/respond.js";
import { ensureCredentials, type Credentials } from "./pki.js";
import { SchemaDefaulter } from "./registry/defaults.js";
import { RegistryStore } from "./registry/store.js";
import type { WatchEnv } from "./registry/watch.js";
import { AdmissionMetrics } from "./admission-metrics.js";
import { ApiServerMetrics, countResponseBytes, type RequestRecord } from "./request-metrics.js";
import { parsePath, type ParsedPath } from "./routing.js";
import { ServiceAllocator } from "./services/allocator.js";
import { parseIpRange, parsePortRange } from "./services/ranges.js";
import { advertiseAddress, ensureKubernetesService, startServiceAllocator } from "./services/start.js";
import type { Service } from "../api/core/types.js";

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
  /** The API server's metrics registry; one from its feature gates when omitted. */
  metrics?: MetricsRegistry;
  /** The parsed command line, for /flagz. */
  flags?: { list(): readonly FlagEntry[] };
  /** Admission plugins run after the built-in ones (NamespaceLifecycle); later features and tests plug in here. */
  admission?: AdmissionOptions;
  /** Record the request metrics (default true; the benchmark turns them off to measure their cost). */
  requestMetrics?: boolean;
}

export interface RunningApiServer {
  url: string;
  /** Compact the store now and tell the watch caches (what the periodic compactor does). */
  compact(revision: number): Promise<void>;
  port: number;
  kubeconfigPath: string;
  credentials: Credentials;
  storage: Storage;
  stores: ReadonlyMap<string, RegistryStore>;
  metrics: MetricsRegistry;
  /** The admission chain's timing (the stable admission histograms). */
  admissionMetrics: AdmissionMetrics;
  close(): Promise<void>;
}

export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const naming = namingFor(options.groupSuffix);
  const credentials = await ensureCredentials(options.dataDir, options.bindAddress !== "0.0.0.0" && options.bindAddress !== "::" ? [options.bindAddress] : []);
  const opened = await openStorage({ ...options.storage, dataDir: options.dataDir, log });
  const storage = opened.store;
  const stores = new Map<string, RegistryStore>();
  const compacted = (revision: number) => {
    for (const s of stores.values()) s.cacher.compacted(revision);
  };
  const compactor: Compactor = startCompactor(storage, { intervalMs: options.compactionIntervalMs, log, onCompacted: compacted });

  const metrics = options.metrics ?? componentRegistry({ featureGates: options.featureGates });
  const admissionMetrics = new AdmissionMetrics(metrics);
  const registry = new ApiRegistry(options.modules, naming);
  const defaulter = new SchemaDefaulter(registry.schemas);
  const namespaceStore = () => stores.get("/namespaces");
  // Built-in plugins first, then the caller's; NamespaceLifecycle only where namespaces are served.
  const servesNamespaces = registry.resources.some((d) => d.group === "" && d.resource === "namespaces");
  const lifecycle = namespaceLifecycle(async (namespace) => (await namespaceStore()!.get(undefined, namespace)).object);
  const servesServices = registry.resources.some((d) => d.group === "" && d.resource === "services");
  const allocator = servesServices
    ? new ServiceAllocator({
        storage,
        ipRange: parseIpRange(options.serviceClusterIPRange ?? "10.96.0.0/12"),
        portRange: parsePortRange(options.serviceNodePortRange ?? "30000-32767"),
        listServices: async () => (await stores.get("/services")!.list(undefined, {})).items.map((i) => i.object as Service),
        decode: (value) => stores.get("/services")!.decode({ key: "", value, createRevision: 0, modRevision: 0, version: 0 } as never),
        log,
      })
    : undefined;
  const admission = new AdmissionChain({
    mutating: [
      ...(servesNamespaces ? [lifecycle] : []),
      priorityAdmission(() => stores.get(`${naming.schedulingGroup}/priorityclasses`)),
      ...(allocator ? [allocator.plugin()] : []),
    ],
    timing: admissionMetrics,
  }).with(options.admission ?? {});
  for (const def of registry.resources) {
    let store: RegistryStore;
    const cacher = new CachedStorage<ApiObject>({
      backend: storage,
      prefix: `/registry/${def.group === "" ? "core" : def.group}/${def.resource}/`,
      decode: (kv) => store.decode(kv),
      withRevision: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
      ...(options.cacheWindowMs !== undefined ? { windowMs: options.cacheWindowMs } : {}),
      snapshots: options.featureGates.enabled("ListFromCacheSnapshot"),
      log,
    });
    store = new RegistryStore(def, {
      storage: cacher,
      naming,
      defaulter,
      admission,
      sharding: options.featureGates.enabled("ShardedListAndWatch"),
      unsafeDeletion: options.featureGates.enabled("AllowUnsafeMalformedObjectDeletion"),
    });
    stores.set(`${def.group}/${def.resource}`, store);
  }
  await Promise.all([...stores.values()].map((s) => s.cacher.start()));
  await ensureSystemNamespaces(stores.get("/namespaces"), naming);
  await ensureSystemPriorityClasses(stores.get(`${naming.schedulingGroup}/priorityclasses`), naming);
  const stopServiceAllocator = allocator ? await startServiceAllocator(allocator, { storage, log }) : () => {};

  const watchEnv: WatchEnv & { initialEventsEndAnnotation: string } = {
    metaGroup: naming.metaGroup,
    watchList: options.featureGates.enabled("WatchList"),
    sharding: options.featureGates.enabled("ShardedListAndWatch"),
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    initialEventsEndAnnotation: naming.initialEventsEndAnnotation,
  };
  const encoding: Encoding = {
    schemas: registry.schemas,
    cbor: options.featureGates.enabled("CBORServingAndStorage"),
    compression: options.featureGates.enabled("APIResponseCompression"),
    lookupType: (apiVersion, kind) => registry.schemaTypeOf(apiVersion, kind),
  };
  const discovery = new Discovery(registry);
  const openapi = new OpenApi(registry);
  let ready = false;
  // The same /healthz, /livez, /readyz, /version, /metrics and z-pages as every component (seed 002).
  const endpoints = componentEndpoints({
    component: "orch-apiserver",
    featureGates: options.featureGates,
    metrics,
    ...(options.flags ? { flags: options.flags } : {}),
  });
  endpoints.health.addLive(conditionCheck("etcd", () => opened.healthy(), `storage (${storage.backend}) is not reachable`));
  endpoints.health.addReady(conditionCheck("etcd-readiness", () => opened.healthy(), `storage (${storage.backend}) is not ready`));
  endpoints.health.addReady(conditionCheck("informer-sync", () => ready, "watch caches have not synced"));
  endpoints.health.addReady(conditionCheck("autoregister-completion", () => ready, "API groups are not all registered yet"));
  const apiMetrics = new ApiServerMetrics({
    registry: metrics,
    storage,
    resources: new Map(registry.resources.map((d) => [
      `${d.group}/${d.resource}`,
      { group: d.group, resource: d.resource, prefix: `/registry/${d.group === "" ? "core" : d.group}/${d.resource}/` },
    ])),
    log,
  });
  await apiMetrics.start();
  const recordRequests = options.requestMetrics !== false;
  const agents = new NodeAgentClient(credentials.nodeAgentClient);

  const handle = async (req: Incoming, res: Outgoing, url: URL, parsed: ParsedPath, record: RequestRecord | undefined) => {
    const path = url.pathname;
    if (!isPublicPath(path) && req.headers.authorization !== `Bearer ${credentials.adminToken}`) throw unauthorized("Unauthorized");
    if (endpoints.handles(path) && (req.method === "GET" || req.method === "HEAD") && (await endpoints.serve(req, res, url))) return;
    if (path === "/openapi/v3" || path.startsWith("/openapi/v3/") || path === "/openapi/v2") {
      const doc = openapi.answer(path);
      if (doc === undefined) throw pathNotFound();
      return sendJson(res, 200, doc);
    }
    if (parsed.kind === "discovery") {
      const answer = discovery.answer(parsed, req.headers.accept);
      if (answer === undefined) throw pathNotFound();
      return sendJson(res, 200, answer.body, answer.contentType);
    }
    if (parsed.kind === "resource") {
      const def = registry.lookup(parsed.group, parsed.version, parsed.resource);
      const store = def === undefined ? undefined : stores.get(`${def.group}/${def.resource}`);
      if (store === undefined) throw pathNotFound();
      if (parsed.subresource === "log" && def!.subresources?.log && parsed.name !== undefined) {
        return handlePodLog({ req, res, path: parsed, query: url.searchParams, pods: store, nodes: stores.get("/nodes"), agents });
      }
      // Upgrades go to the "upgrade" listener; over HTTP/2 or without one, upstream answers the same.
      if (CONNECT_SUBRESOURCES.has(parsed.subresource ?? "") && def!.subresources?.exec && parsed.name !== undefined) throw badRequest("Upgrade request required");
      // A streaming list reports how long its initial events took (apiserver_watch_list_duration_seconds).
      const env = record !== undefined && url.searchParams.get("sendInitialEvents") === "true"
        ? { ...watchEnv, onInitialEventsEnd: () => apiMetrics.watchListDone(parsed, (performance.now() - record.started) / 1000) }
        : watchEnv;
      return handleResource({ req, res, path: parsed, query: url.searchParams, store, watchEnv: env, schemas: registry.schemas, encoding });
    }
    throw pathNotFound();
  };

  const server: Http2SecureServer = createSecureServer(
    // The CA goes in the chain: a joining node pins it by digest (a join token) before trusting it.
    { cert: credentials.serverCertPem + credentials.caCertPem, key: credentials.serverKeyPem, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } },
    (req, res) => {
      const url = new URL(req.url ?? "/", "https://localhost");
      const parsed = parsePath(url.pathname);
      const record = recordRequests ? apiMetrics.begin(req, parsed, url.searchParams) : undefined;
      const bytes = record === undefined || record.longRunning !== undefined ? undefined : countResponseBytes(res);
      handle(req, res, url, parsed, record)
        .catch((err: unknown) => {
          if (!isApiError(err)) log(`internal error on ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
          try {
            sendError(res, err, { req, encoding });
          } catch {
            res.destroy?.();
          }
        })
        .finally(() => {
          if (record !== undefined) apiMetrics.end(record, res, bytes?.());
        });
    },
  );
  server.on("sessionError", () => {});
  // Connect sub-resources (pods/exec) arrive as HTTP/1.1 Upgrade requests; close() ends the ones still open.
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    const url = new URL(req.url ?? "/", "https://localhost");
    const parsed = parsePath(url.pathname);
    // Counted as a long-running CONNECT while the connection lasts; 101 once carried to the agent.
    const record = recordRequests ? apiMetrics.begin(req, parsed, url.searchParams) : undefined;
    let code = 101;
    socket.once("close", () => record !== undefined && apiMetrics.end(record, { statusCode: code }, undefined));
    const upgrade = async () => {
      if (req.headers.authorization !== `Bearer ${credentials.adminToken}`) throw unauthorized("Unauthorized");
      const def = parsed.kind === "resource" ? registry.lookup(parsed.group, parsed.version, parsed.resource) : undefined;
      if (parsed.kind !== "resource" || !def?.subresources?.exec || !CONNECT_SUBRESOURCES.has(parsed.subresource ?? "") || parsed.name === undefined) {
        throw badRequest(`${req.headers.upgrade ?? "upgrade"} requests are served only by connect sub-resources (pods/exec, pods/attach)`);
      }
      const pods = stores.get(`${def.group}/${def.resource}`)!;
      await proxyPodStream({ req, socket, head, path: parsed, query: url.searchParams, pods, nodes: stores.get("/nodes"), agentClient: credentials.nodeAgentClient });
    };
    upgrade().catch((err: unknown) => {
      if (!isApiError(err)) log(`internal error on upgrade ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
      const status = statusFromError(err);
      code = status.code ?? 500;
      rawReply(socket, status.code ?? 500, JSON.stringify(status), "application/json");
    });
  });
  // Watch events are small writes that must leave at once: no Nagle delay.
  server.on("secureConnection", (socket: { setNoDelay(on: boolean): void }) => socket.setNoDelay(true));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.securePort, options.bindAddress, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  if (allocator) {
    await ensureKubernetesService({ services: stores.get("/services")!, endpoints: stores.get("/endpoints") }, { allocator, address: advertiseAddress(options.bindAddress), port, log });
  }
  const host = options.bindAddress === "0.0.0.0" || options.bindAddress === "::" ? "127.0.0.1" : options.bindAddress;
  const url = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = join(options.dataDir, "admin.kubeconfig");
  writeFileSync(kubeconfigPath, kubeconfig(url, credentials), { mode: 0o600 });
  ready = true;
  if (options.announceReady !== false) log(`orch apiserver ready: serving ${url} (storage ${storage.backend}); kubeconfig ${kubeconfigPath}`);

  return {
    url,
    port,
    kubeconfigPath,
    credentials,
    storage,
    stores,
    metrics,
    admissionMetrics,
    async compact(revision) {
      await storage.compact(revision);
      compacted(revision);
    },
    async close() {
      ready = false;
      apiMetrics.stop();
      agents.close();
      compactor.stop();
      stopServiceAllocator();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Watches and exec sessions hold connections open; end them so close() completes.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        for (const s of upgraded) s.destroy();
        setTimeout(resolve, 2000).unref();
      });
      for (const s of stores.values()) s.cacher.stop();
      await storage.close();
    },
  };
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
