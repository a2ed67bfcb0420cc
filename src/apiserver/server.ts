// The API server: HTTPS only, HTTP/2 (ALPN) and HTTP/1.1 on one port. On
// first start it makes its CA, serving certificate and admin token in the
// data folder and writes admin.kubeconfig; it opens the store, starts one
// watch cache per resource, makes the system namespaces, and logs one line
// when ready (/readyz answers 200 only from then on).

import { createSecureServer, type Http2SecureServer } from "node:http2";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { namingFor, type Naming } from "../api/naming.js";
import type { ApiGroupModule } from "../api/resource.js";
import type { FeatureGates } from "../component/index.js";
import { versionInfo } from "../component/index.js";
import { isApiError, notFound, unauthorized, type ApiObject } from "../machinery/index.js";
import { openStorage, startCompactor, type Compactor, type Storage, type StorageConfig } from "../storage/index.js";
import { Cacher } from "../storage/cacher/cacher.js";
import { AdmissionChain, namespaceLifecycle, type AdmissionOptions } from "./admission/index.js";
import { ApiRegistry } from "./api-registry.js";
import { Discovery } from "./handlers/discovery.js";
import { handleResource } from "./handlers/resource.js";
import { OpenApi } from "./handlers/openapi.js";
import { sendError, sendJson, type Encoding, type Incoming, type Outgoing } from "./http/respond.js";
import { ensureCredentials, type Credentials } from "./pki.js";
import { SchemaDefaulter } from "./registry/defaults.js";
import { RegistryStore } from "./registry/store.js";
import type { WatchEnv } from "./registry/watch.js";
import { parsePath } from "./routing.js";

export interface ApiServerOptions {
  dataDir: string;
  bindAddress: string;
  /** 0 picks a free port (tests). */
  securePort: number;
  storage: Omit<StorageConfig, "dataDir" | "log">;
  compactionIntervalMs: number;
  featureGates: FeatureGates;
  groupSuffix?: string;
  modules: readonly ApiGroupModule[];
  log?: (line: string) => void;
  /** Bookmark cadence on watches that allow them (default 60 s, as upstream's order of magnitude). */
  bookmarkIntervalMs?: number;
  /** How long the watch cache keeps events (default 75 s, seed 000 "Resource version semantics" 4). */
  cacheWindowMs?: number;
  /** Admission plugins run after the built-in ones (NamespaceLifecycle); later features and tests plug in here. */
  admission?: AdmissionOptions;
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
  close(): Promise<void>;
}

const PUBLIC_PATHS = new Set(["/version", "/healthz", "/livez", "/readyz"]);

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

  const registry = new ApiRegistry(options.modules, naming);
  const defaulter = new SchemaDefaulter(registry.schemas);
  const namespaceStore = () => stores.get("/namespaces");
  // Built-in plugins first, then the caller's; NamespaceLifecycle only where namespaces are served.
  const servesNamespaces = registry.resources.some((d) => d.group === "" && d.resource === "namespaces");
  const lifecycle = namespaceLifecycle(async (namespace) => (await namespaceStore()!.get(undefined, namespace)).object);
  const admission = new AdmissionChain({ mutating: servesNamespaces ? [lifecycle] : [] }).with(options.admission ?? {});
  for (const def of registry.resources) {
    let store: RegistryStore;
    const cacher = new Cacher<ApiObject>({
      store: storage,
      prefix: `/registry/${def.group === "" ? "core" : def.group}/${def.resource}/`,
      decode: (kv) => store.decode(kv),
      withRevision: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
      ...(options.cacheWindowMs !== undefined ? { windowMs: options.cacheWindowMs } : {}),
      log,
    });
    store = new RegistryStore(def, {
      storage,
      cacher,
      naming,
      defaulter,
      admission,
      snapshots: options.featureGates.enabled("ListFromCacheSnapshot"),
      sharding: options.featureGates.enabled("ShardedListAndWatch"),
      unsafeDeletion: options.featureGates.enabled("AllowUnsafeMalformedObjectDeletion"),
    });
    stores.set(`${def.group}/${def.resource}`, store);
  }
  await Promise.all([...stores.values()].map((s) => s.cacher.start()));
  await ensureSystemNamespaces(stores.get("/namespaces"), naming);

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

  const handle = async (req: Incoming, res: Outgoing) => {
    const url = new URL(req.url ?? "/", "https://localhost");
    const path = url.pathname;
    if (!PUBLIC_PATHS.has(path) && req.headers.authorization !== `Bearer ${credentials.adminToken}`) throw unauthorized("Unauthorized");
    switch (path) {
      case "/version":
        return sendJson(res, 200, versionInfo());
      case "/healthz":
      case "/livez":
        return sendText(res, 200, "ok");
      case "/readyz":
        return ready && opened.healthy() ? sendText(res, 200, "ok") : sendText(res, 500, "[-]storage or caches not ready\nreadyz check failed");
    }
    if (path === "/openapi/v3" || path.startsWith("/openapi/v3/") || path === "/openapi/v2") {
      const doc = openapi.answer(path);
      if (doc === undefined) throw notFound({ group: "", resource: "" }, "");
      return sendJson(res, 200, doc);
    }
    const parsed = parsePath(path);
    if (parsed.kind === "discovery") {
      const answer = discovery.answer(parsed, req.headers.accept);
      if (answer === undefined) throw notFound({ group: "", resource: "" }, "");
      return sendJson(res, 200, answer.body, answer.contentType);
    }
    if (parsed.kind === "resource") {
      const def = registry.lookup(parsed.group, parsed.version, parsed.resource);
      const store = def === undefined ? undefined : stores.get(`${def.group}/${def.resource}`);
      if (store === undefined) throw notFound({ group: "", resource: "" }, "");
      return handleResource({ req, res, path: parsed, query: url.searchParams, store, watchEnv, schemas: registry.schemas, encoding });
    }
    throw notFound({ group: "", resource: "" }, "");
  };

  const server: Http2SecureServer = createSecureServer(
    { cert: credentials.serverCertPem, key: credentials.serverKeyPem, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (!isApiError(err)) log(`internal error on ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
        try {
          sendError(res, err, { req, encoding });
        } catch {
          res.destroy?.();
        }
      });
    },
  );
  server.on("sessionError", () => {});
  // Watch events are small writes that must leave at once: no Nagle delay.
  server.on("secureConnection", (socket: { setNoDelay(on: boolean): void }) => socket.setNoDelay(true));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.securePort, options.bindAddress, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.bindAddress === "0.0.0.0" || options.bindAddress === "::" ? "127.0.0.1" : options.bindAddress;
  const url = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = join(options.dataDir, "admin.kubeconfig");
  writeFileSync(kubeconfigPath, kubeconfig(url, credentials), { mode: 0o600 });
  ready = true;
  log(`orch apiserver ready: serving ${url} (storage ${storage.backend}); kubeconfig ${kubeconfigPath}`);

  return {
    url,
    port,
    kubeconfigPath,
    credentials,
    storage,
    stores,
    async compact(revision) {
      await storage.compact(revision);
      compacted(revision);
    },
    async close() {
      ready = false;
      compactor.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Watches hold connections open; end them so close() completes.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        setTimeout(resolve, 2000).unref();
      });
      for (const s of stores.values()) s.cacher.stop();
      await storage.close();
    },
  };
}

function sendText(res: Outgoing, code: number, text: string): void {
  res.writeHead(code, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
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
