// Test harness: an in-process API server on a free loopback port over a
// fresh lmdb store (or a given etcd), and a small HTTPS client that trusts
// its CA and sends the admin token. Real server, real store, real TLS.

import { request as httpsRequest } from "node:https";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApiGroupModule } from "../../api/resource.js";
import { parseFeatureGates } from "../../component/index.js";
import { startApiServer, type RequestLimits, type RunningApiServer } from "../server.js";
import type { StorageConfig } from "../../storage/index.js";
import type { AdmissionOptions } from "../admission/index.js";
import type { Authenticator } from "../filters/index.js";
import type { AuditConfig } from "../audit/index.js";
import type { ServiceAccountOptions } from "../authentication/service-account-options.js";
import type { AggregationOptions } from "../aggregation/front-proxy.js";

export interface TestServer {
  server: RunningApiServer;
  dataDir: string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Open a watch and collect its events as parsed JSON lines. */
  watch(path: string, options?: { headers?: Record<string, string> }): Promise<TestWatch>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
  /** The body as received (binary formats, gzip). */
  body: Buffer;
}

export interface TestWatch {
  status: number;
  /** Resolves with the next `n` events (parsed), failing after `ms`. */
  next(n?: number, ms?: number): Promise<any[]>;
  close(): void;
}

export async function startTestServer(options: {
  modules: readonly ApiGroupModule[];
  gates?: Record<string, string>;
  storage?: Omit<StorageConfig, "dataDir" | "log">;
  bookmarkIntervalMs?: number;
  cacheWindowMs?: number;
  watchCacheBudgetBytes?: number;
  dataDir?: string;
  admission?: AdmissionOptions;
  authorizationModes?: readonly string[];
  authenticators?: readonly Authenticator[];
  limits?: RequestLimits;
  audit?: AuditConfig;
  encryptionProviderConfig?: string;
  admissionControlConfigFile?: string;
  serviceAccounts?: ServiceAccountOptions;
  /** --api-group-suffix (default orch.io; k8s.io for upstream's names). */
  groupSuffix?: string;
  /** The dashboard's built files (default dist/ui; false: none). */
  dashboard?: string | false;
  /** Where the server's log lines go (default: nowhere). */
  log?: (line: string) => void;
  /** The aggregation layer's options (front proxy files, check interval). */
  aggregation?: AggregationOptions;
}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "orch-apiserver-test-"));
  const server = await startApiServer({
    dataDir,
    bindAddress: "127.0.0.1",
    securePort: 0,
    storage: options.storage ?? { backend: "lmdb" },
    compactionIntervalMs: 0,
    featureGates: parseFeatureGates(options.gates ?? {}),
    modules: options.modules,
    log: options.log ?? (() => {}),
    ...(options.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: options.bookmarkIntervalMs } : {}),
    ...(options.dashboard !== undefined ? { dashboard: options.dashboard } : {}),
    ...(options.cacheWindowMs !== undefined ? { cacheWindowMs: options.cacheWindowMs } : {}),
    ...(options.watchCacheBudgetBytes !== undefined ? { watchCacheBudgetBytes: options.watchCacheBudgetBytes } : {}),
    ...(options.admission !== undefined ? { admission: options.admission } : {}),
    ...(options.authorizationModes !== undefined ? { authorizationModes: options.authorizationModes } : {}),
    ...(options.authenticators !== undefined ? { authenticators: options.authenticators } : {}),
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    ...(options.audit !== undefined ? { audit: options.audit } : {}),
    ...(options.encryptionProviderConfig !== undefined ? { encryptionProviderConfig: options.encryptionProviderConfig } : {}),
    ...(options.admissionControlConfigFile !== undefined ? { admissionControlConfigFile: options.admissionControlConfigFile } : {}),
    ...(options.serviceAccounts !== undefined ? { serviceAccounts: options.serviceAccounts } : {}),
    ...(options.groupSuffix !== undefined ? { groupSuffix: options.groupSuffix } : {}),
    ...(options.aggregation !== undefined ? { aggregation: options.aggregation } : {}),
  });
  const base = {
    host: "127.0.0.1",
    port: server.port,
    ca: server.credentials.caCertPem,
  };
  const auth = { authorization: `Bearer ${server.credentials.adminToken}` };

  const request = (method: string, path: string, opts: RequestOptions = {}) =>
    new Promise<TestResponse>((resolve, reject) => {
      const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
      const headers: Record<string, string | number> = {
        ...auth,
        ...(body !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {}),
        ...opts.headers,
      };
      const req = httpsRequest({ ...base, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, body: raw });
        });
      });
      req.on("error", reject);
      if (body !== undefined) req.write(body);
      req.end();
    });

  const watch = (path: string, opts: { headers?: Record<string, string> } = {}) =>
    new Promise<TestWatch>((resolve, reject) => {
      const req = httpsRequest({ ...base, method: "GET", path, headers: { ...auth, ...opts.headers } }, (res) => {
        const events: any[] = [];
        let buffer = "";
        let waiter: (() => void) | undefined;
        res.on("data", (c: Buffer) => {
          buffer += c.toString("utf8");
          let nl: number;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim() !== "") events.push(JSON.parse(line));
          }
          waiter?.();
        });
        let ended = false;
        res.on("end", () => {
          ended = true;
          if (buffer.trim() !== "") events.push(JSON.parse(buffer));
          waiter?.();
        });
        resolve({
          status: res.statusCode ?? 0,
          async next(n = 1, ms = 5000) {
            const deadline = Date.now() + ms;
            while (events.length < n) {
              if (ended) throw new Error(`watch ended with ${events.length}/${n} events: ${JSON.stringify(events)}`);
              const left = deadline - Date.now();
              if (left <= 0) throw new Error(`timed out with ${events.length}/${n} events: ${JSON.stringify(events)}`);
              await new Promise<void>((r) => {
                waiter = r;
                setTimeout(r, left).unref();
              });
            }
            return events.splice(0, n);
          },
          close: () => req.destroy(),
        });
      });
      req.on("error", reject);
      req.end();
    });

  return {
    server,
    dataDir,
    request,
    watch,
    async close() {
      await server.close();
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An HTTP/1.1 Upgrade request: the status and body of the server's refusal. */
export function upgradeRefusal(t: TestServer, method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: "127.0.0.1",
      port: t.server.port,
      ca: t.server.credentials.caCertPem,
      method,
      path,
      headers: { authorization: `Bearer ${t.server.credentials.adminToken}`, connection: "Upgrade", upgrade: "websocket" },
    });
    req.once("upgrade", () => reject(new Error("upgraded")));
    req.once("response", (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c)).once("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once("error", reject);
    req.end();
  });
}
