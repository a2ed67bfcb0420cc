// The aggregation layer (upstream's kube-aggregator, inside the API server):
//   - keeps the local APIServices (./local.ts) for every group version served here;
//   - checks each remote APIService (one naming a Service) as upstream's
//     availability controller does: the Service, its port, its Endpoints
//     (./resolve.ts), then a GET of /apis/GROUP/VERSION at the endpoint, and
//     writes the Available condition (Passed, or ServiceNotFound,
//     ServicePortError, EndpointsNotFound, MissingEndpoints,
//     FailedDiscoveryCheck); on every change of an APIService or of the
//     Service/Endpoints one names, and every `checkIntervalMs`;
//   - proxies requests under /apis/GROUP/VERSION of a remote APIService to
//     its endpoint, after this server's authentication and authorization:
//     TLS verified with the caBundle for SERVICE.NAMESPACE.svc (or not, with
//     insecureSkipTLSVerify), the front proxy's client certificate, the
//     caller in X-Remote-User / X-Remote-Group / X-Remote-Extra-*; bodies
//     streamed both ways (watches), HTTP/1.1 upgrades joined byte for byte;
//   - answers /apis/GROUP for remote groups and hands discovery
//     (handlers/discovery.ts) the remote groups with the resource lists the
//     checks fetched, so they appear in /apis and aggregated discovery.
// A remote APIService for a group version served here is ignored (and put
// back to local by the local sync), as upstream's autoregister controller
// keeps its own group versions.

import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { connect as tlsConnect } from "node:tls";
import type { Duplex } from "node:stream";
import { availableCondition, automanagedLabel, type APIService, type APIServiceCondition } from "../../api/apiregistration/index.js";
import { compareVersions } from "../../api/apiextensions/custom-resource.js";
import { findSubresource } from "../../api/resource.js";
import { formatTimestamp, isApiError, type ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { ApiRegistry } from "../api-registry.js";
import type { RequestContext, ResponseExchange, UpgradeExchange, UserInfo } from "../filters/index.js";
import type { RemoteGroup, RemoteResource } from "../handlers/discovery.js";
import { backendRequestHeaders, forwardable } from "../handlers/subresources/proxy.js";
import { spliceUpgrade } from "../handlers/upgrade-splice.js";
import { sendJson } from "../http/respond.js";
import type { RegistryStore } from "../registry/store.js";
import type { Stores } from "../storage-factory.js";
import { isAliasGroup, localApiService, localAvailable, specMatches, LOCAL_CONDITION_REASON } from "./local.js";
import { resolveEndpoint, type ServiceObjects } from "./resolve.js";

export interface AggregatorOptions {
  readonly registry: ApiRegistry;
  readonly stores: Stores;
  readonly naming: Naming;
  readonly log: (line: string) => void;
  /** The front proxy's client certificate: how extension servers know the API server. */
  readonly proxyClient: { readonly cert: string; readonly key: string };
  /** Discovery answers, rebuilt when remote groups change. */
  readonly documents: readonly { invalidate(): void }[];
  /** How often remote APIServices are checked besides on changes (default 30 s, upstream's resync). */
  readonly checkIntervalMs?: number;
}

interface Remote {
  readonly svc: APIService;
  readonly agent: HttpsAgent;
  readonly agentKey: string;
  available: boolean;
  resources: RemoteResource[] | undefined;
}

const CHECK_TIMEOUT_MS = 5000;

export class Aggregator {
  readonly #o: AggregatorOptions;
  readonly #store: RegistryStore;
  readonly #builtinGroups: ReadonlySet<string>;
  readonly #label: string;
  readonly #objects: ServiceObjects;
  /** Remote APIServices by GROUP/VERSION. */
  readonly #remote = new Map<string, Remote>();
  #fingerprint = "";
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(options: AggregatorOptions, store: RegistryStore) {
    this.#o = options;
    this.#store = store;
    // The groups served before any custom resource is: the rest are custom resources' (their own priorities).
    this.#builtinGroups = new Set(options.registry.groups().map((g) => g.name));
    this.#label = automanagedLabel(options.naming);
    this.#objects = {
      get: async (resource, namespace, name) => {
        const s = options.stores.for({ group: "", resource });
        return s === undefined ? undefined : (await s.cacher.get(s.keyFor(namespace, name), { mode: "Any" }))?.object;
      },
    };
  }

  /** Sync once (local APIServices exist and remote ones were checked when this resolves), then follow changes. */
  async start(): Promise<void> {
    this.#unsubscribe.push(this.#store.cacher.subscribe(() => this.#schedule()));
    for (const resource of ["services", "endpoints"] as const) {
      const s = this.#o.stores.for({ group: "", resource });
      if (s === undefined) continue;
      // Only the Services (and their Endpoints) a remote APIService names.
      this.#unsubscribe.push(s.cacher.subscribe((e) => {
        const obj = e.current.object;
        for (const r of this.#remote.values()) {
          if (r.svc.spec?.service?.namespace === obj.metadata.namespace && r.svc.spec?.service?.name === obj.metadata.name) return this.#schedule();
        }
      }));
    }
    this.#schedule();
    await this.idle();
    this.#timer = setInterval(() => this.#schedule(), this.#o.checkIntervalMs ?? 30_000);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    for (const u of this.#unsubscribe) u();
    for (const r of this.#remote.values()) r.agent.destroy();
  }

  /** The served kinds changed (a custom resource came or went): the local APIServices follow (once started). */
  invalidate(): void {
    if (this.#timer !== undefined) this.#schedule();
  }

  /** Wait for the current sync (tests, start). */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** The remote groups, by groupPriorityMinimum then name; versions by versionPriority then kube-like order. */
  groups(): RemoteGroup[] {
    const byGroup = new Map<string, Remote[]>();
    for (const r of this.#remote.values()) {
      const g = r.svc.spec!.group!;
      byGroup.set(g, [...(byGroup.get(g) ?? []), r]);
    }
    const priority = (rs: Remote[]) => Math.max(...rs.map((r) => r.svc.spec?.groupPriorityMinimum ?? 0));
    return [...byGroup]
      .sort(([a, ra], [b, rb]) => priority(rb) - priority(ra) || a.localeCompare(b))
      .map(([name, rs]) => ({
        name,
        versions: [...rs]
          .sort((a, b) => (b.svc.spec?.versionPriority ?? 0) - (a.svc.spec?.versionPriority ?? 0) || compareVersions(a.svc.spec!.version!, b.svc.spec!.version!))
          .map((r) => ({ version: r.svc.spec!.version!, available: r.available, resources: r.resources })),
      }));
  }

  /** Answers a request for a remote group (its APIGroup) or group version (proxied); false when it is not one. */
  async serve(ctx: RequestContext<ResponseExchange>): Promise<boolean> {
    const target = this.#target(ctx);
    if (target === undefined) return false;
    const { res, req } = ctx.exchange;
    if (target.kind === "group") {
      const versions = target.group.versions.map((v) => ({ groupVersion: `${target.group.name}/${v.version}`, version: v.version }));
      sendJson(res, 200, { kind: "APIGroup", apiVersion: "v1", name: target.group.name, versions, preferredVersion: versions[0] });
      return true;
    }
    const backend = await this.#backend(target.remote);
    if (backend === undefined) {
      plainError(res, 503, "service unavailable");
      return true;
    }
    const headers = withIdentity(backendRequestHeaders(req.headers, req.socket?.remoteAddress), ctx.user);
    let response: IncomingMessage;
    try {
      response = await new Promise<IncomingMessage>((resolve, reject) => {
        const out = httpsRequest({
          host: backend.host, port: backend.port, method: req.method ?? "GET", path: req.url ?? "/", headers,
          agent: target.remote.agent, servername: servername(target.remote.svc),
        });
        out.once("response", resolve);
        out.once("error", reject);
        req.pipe(out);
      });
    } catch (err) {
      // The server went away: check it now rather than at the next interval.
      this.#schedule();
      plainError(res, 503, (err as Error).message);
      return true;
    }
    const answer: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) if (value !== undefined && forwardable(name)) answer[name] = value;
    res.writeHead(response.statusCode ?? 502, answer);
    await new Promise<void>((resolve) => {
      response.once("error", () => {
        res.destroy();
        resolve();
      });
      res.once("close", () => {
        response.destroy();
        resolve();
      });
      response.pipe(res as NodeJS.WritableStream).once("finish", resolve);
    });
    return true;
  }

  /** An HTTP/1.1 upgrade under a remote group version: joined to the endpoint; false when it is not one. */
  async upgrade(ctx: RequestContext<UpgradeExchange>): Promise<boolean> {
    const target = this.#target(ctx);
    if (target === undefined || target.kind === "group") return false;
    const { socket, head, req } = ctx.exchange;
    const backend = await this.#backend(target.remote);
    const refuse = (message: string) => {
      ctx.exchange.statusCode = 503;
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(message) + 1}\r\nconnection: close\r\n\r\n${message}\n`);
    };
    if (backend === undefined) {
      refuse("service unavailable");
      return true;
    }
    const svc = target.remote.svc;
    let conn: Duplex;
    try {
      conn = await new Promise<Duplex>((resolve, reject) => {
        const s = tlsConnect({ host: backend.host, port: backend.port, servername: servername(svc), ALPNProtocols: ["http/1.1"], ...tlsOptions(svc, this.#o.proxyClient) }, () => resolve(s));
        s.once("error", reject);
      });
    } catch (err) {
      this.#schedule();
      refuse((err as Error).message);
      return true;
    }
    conn.removeAllListeners("error");
    ctx.exchange.statusCode = 101;
    // The caller's identity rides in the front proxy's headers; any the caller sent are dropped.
    const raw: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (!req.rawHeaders[i]!.toLowerCase().startsWith("x-remote-")) raw.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    for (const [name, value] of Object.entries(withIdentity({}, ctx.user))) for (const v of [value].flat()) raw.push(name, String(v));
    spliceUpgrade({ req: { method: req.method, rawHeaders: raw } as IncomingMessage, socket, head }, conn, req.url ?? "/", `${backend.host}:${backend.port}`);
    return true;
  }

  /** What a request is, for the aggregator: a remote group's APIGroup, a remote group version, or nothing of ours. */
  #target(ctx: RequestContext): { kind: "group"; group: RemoteGroup } | { kind: "version"; remote: Remote } | undefined {
    const p = ctx.path;
    if (this.#remote.size === 0) return undefined;
    if (p.kind !== "resource" && p.kind !== "discovery") return undefined;
    const group = p.group;
    if (group === undefined || group === "" || (p.kind === "discovery" && p.legacy)) return undefined;
    if (p.version === undefined) {
      if (this.#o.registry.groups().some((g) => g.name === group)) return undefined;
      const remote = this.groups().find((g) => g.name === group);
      return remote === undefined ? undefined : { kind: "group", group: remote };
    }
    const remote = this.#remote.get(`${group}/${p.version}`);
    if (remote === undefined || this.#o.registry.resourcesIn(group, p.version).length > 0) return undefined;
    return { kind: "version", remote };
  }

  /** The endpoint of an available remote APIService, else undefined (the proxy's "service unavailable"). */
  async #backend(remote: Remote): Promise<{ host: string; port: number } | undefined> {
    if (!remote.available) return undefined;
    const r = await resolveEndpoint(this.#objects, remote.svc.spec!.service!);
    return r.ok ? r : undefined;
  }

  #schedule(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      await Promise.resolve();
      try {
        do {
          this.#again = false;
          try {
            await this.#sync();
          } catch (err) {
            this.#o.log(`aggregation: ${err instanceof Error ? err.message : String(err)}; retrying at the next change or check`);
          }
        } while (this.#again && !this.#stopped);
      } finally {
        this.#running = undefined;
      }
    })();
  }

  async #sync(): Promise<void> {
    const listed = (await this.#store.cacher.list(this.#store.prefixFor(undefined), { mode: "Any" })).items.map((i) => i.object as APIService);
    const byName = new Map(listed.map((s) => [s.metadata.name!, s]));
    const now = new Date();
    // Local: every served group version.
    const served = new Set<string>();
    const wanted = this.#o.registry.groups().filter((g) => !isAliasGroup(g.name, this.#o.naming)).flatMap((g) => g.versions.map((version) => localApiService(g.name, version, !this.#builtinGroups.has(g.name), this.#o.naming, this.#label)));
    for (const want of wanted) served.add(want.metadata.name!);
    await Promise.all(wanted.map(async (want) => {
      const have = byName.get(want.metadata.name!);
      if (have === undefined) await this.#write(() => this.#store.create(undefined, want as ApiObject));
      else if (!specMatches(have, want)) {
        await this.#write(() => this.#store.modify(undefined, want.metadata.name!, (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, ...want.metadata.labels } }, spec: want.spec }) as ApiObject));
      }
      const c = have === undefined ? undefined : availableCondition(have);
      if (c?.status !== "True" || c.reason !== LOCAL_CONDITION_REASON) await this.#setAvailable(want.metadata.name!, localAvailable(now));
    }));
    // Gone: automanaged local APIServices of group versions no longer served.
    for (const svc of listed) {
      if (!served.has(svc.metadata.name!) && svc.spec?.service == null && svc.metadata.labels?.[this.#label] !== undefined) {
        await this.#write(() => this.#store.delete(undefined, svc.metadata.name!));
      }
    }
    // Remote: checked, their conditions written.
    const remote = new Map<string, Remote>();
    await Promise.all(listed.filter((s) => s.spec?.service != null && !served.has(s.metadata.name!)).map(async (svc) => {
      const gv = `${svc.spec!.group}/${svc.spec!.version}`;
      const agentKey = JSON.stringify([svc.spec!.caBundle ?? "", svc.spec!.insecureSkipTLSVerify === true]);
      const before = this.#remote.get(gv);
      const agent = before?.agentKey === agentKey ? before.agent : new HttpsAgent({ keepAlive: true, ...tlsOptions(svc, this.#o.proxyClient) });
      if (before !== undefined && before.agent !== agent) before.agent.destroy();
      const checked = await this.#check(svc, agent);
      const entry = { svc, agent, agentKey, available: checked.condition.status === "True", resources: checked.resources ?? before?.resources };
      // Served (and in discovery) as checked before the condition says so: a client that saw it Available finds it so.
      remote.set(gv, entry);
      this.#remote.set(gv, entry);
      this.#refreshDocuments();
      const c = availableCondition(svc);
      if (c?.status !== checked.condition.status || c.reason !== checked.condition.reason || c.message !== checked.condition.message) {
        if (c?.status !== checked.condition.status) this.#o.log(`aggregation: APIService ${svc.metadata.name} Available=${checked.condition.status} (${checked.condition.reason}: ${checked.condition.message})`);
        await this.#setAvailable(svc.metadata.name!, { ...checked.condition, lastTransitionTime: c?.status === checked.condition.status && c.lastTransitionTime ? c.lastTransitionTime : formatTimestamp(now) });
      }
    }));
    for (const [gv, r] of this.#remote) {
      if (remote.has(gv)) continue;
      r.agent.destroy();
      this.#remote.delete(gv);
    }
    this.#refreshDocuments();
  }

  /** Discovery answers are rebuilt when the remote groups (or what they serve, or their availability) changed. */
  #refreshDocuments(): void {
    const fingerprint = JSON.stringify(this.groups());
    if (fingerprint === this.#fingerprint) return;
    this.#fingerprint = fingerprint;
    for (const d of this.#o.documents) d.invalidate();
  }

  /** upstream's availability checks of a remote APIService: its Service, port and Endpoints, then its discovery document. */
  async #check(svc: APIService, agent: HttpsAgent): Promise<{ condition: APIServiceCondition; resources?: RemoteResource[] }> {
    const failed = (reason: string, message: string) => ({ condition: { type: "Available", status: "False", reason, message } });
    const r = await resolveEndpoint(this.#objects, svc.spec!.service!);
    if (!r.ok) return failed(r.reason, r.message);
    const host = r.host.includes(":") ? `[${r.host}]` : r.host;
    const url = `https://${host}:${r.port}/apis/${svc.spec!.group}/${svc.spec!.version}`;
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const product = this.#o.naming.systemNamespace.slice(0, -"-system".length);
        const req = httpsRequest(url, {
          agent, servername: servername(svc), timeout: CHECK_TIMEOUT_MS,
          // As upstream: the check runs as the aggregator, in system:masters, so it is always allowed.
          headers: { accept: "application/json", "x-remote-user": `system:${product}-aggregator`, "x-remote-group": "system:masters" },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c)).on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() })).on("error", reject);
        });
        req.once("timeout", () => req.destroy(new Error(`timed out waiting for ${url}`)));
        req.once("error", reject);
        req.end();
      });
      if (status < 200 || status >= 300) return failed("FailedDiscoveryCheck", `bad status from ${url}: ${status}`);
      let resources: RemoteResource[] | undefined;
      try {
        const list = JSON.parse(body) as { resources?: RemoteResource[] };
        resources = Array.isArray(list.resources) ? list.resources : undefined;
      } catch {
        resources = undefined;
      }
      return { condition: { type: "Available", status: "True", reason: "Passed", message: "all checks passed" }, ...(resources ? { resources } : {}) };
    } catch (err) {
      return failed("FailedDiscoveryCheck", `failing or missing response from ${url}: ${(err as Error).message}`);
    }
  }

  async #setAvailable(name: string, condition: APIServiceCondition): Promise<void> {
    const status = findSubresource(this.#store.def, "status");
    await this.#write(() => this.#store.modify(undefined, name, (cur) => {
      const svc = cur as APIService;
      svc.status = { conditions: [...(svc.status?.conditions ?? []).filter((c) => c.type !== "Available"), condition] };
      return svc as ApiObject;
    }, status ? { subresource: status } : {}));
  }

  /** A write whose object changed or went meanwhile is left to the next sync (it will see the change). */
  async #write(fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (isApiError(err, "AlreadyExists") || isApiError(err, "NotFound") || isApiError(err, "Conflict")) {
        this.#again = true;
        return;
      }
      throw err;
    }
  }
}

/** The name the remote's serving certificate is checked for (upstream: SERVICE.NAMESPACE.svc). */
function servername(svc: APIService): string {
  return `${svc.spec?.service?.name}.${svc.spec?.service?.namespace}.svc`;
}

/** TLS towards a remote: its caBundle (or no verification with insecureSkipTLSVerify), and the front proxy's client certificate. */
function tlsOptions(svc: APIService, client: { cert: string; key: string }): { ca?: string; rejectUnauthorized: boolean; cert: string; key: string } {
  const ca = svc.spec?.caBundle ? Buffer.from(svc.spec.caBundle, "base64").toString() : undefined;
  return { ...(ca ? { ca } : {}), rejectUnauthorized: svc.spec?.insecureSkipTLSVerify !== true, cert: client.cert, key: client.key };
}

/** The request's headers with the caller as the front proxy's headers (upstream's SetAuthProxyHeaders); any X-Remote-* the caller sent is dropped. */
function withIdentity(headers: OutgoingHttpHeaders, user: UserInfo | undefined): OutgoingHttpHeaders {
  for (const name of Object.keys(headers)) if (name.toLowerCase().startsWith("x-remote-")) delete headers[name];
  if (user === undefined) return headers;
  headers["x-remote-user"] = user.name;
  if (user.groups.length > 0) headers["x-remote-group"] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) headers[`x-remote-extra-${encodeURIComponent(key)}`] = [...values];
  return headers;
}

/** upstream's proxyError: http.Error's plain text. */
function plainError(res: ResponseExchange["res"], code: number, message: string): void {
  const body = `${message}\n`;
  res.writeHead(code, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
