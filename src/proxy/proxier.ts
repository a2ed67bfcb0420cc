// The proxy's control loop: informers on Services and EndpointSlices; any
// change schedules a sync (at most one at a time, at most one per
// --iptables-min-sync-period, and one every --iptables-sync-period anyway)
// that rebuilds our rules from the caches and applies them. The orchproxy_*
// metrics of seed 002 (rules sync) are kept here.

import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Naming } from "../machinery/naming.js";
import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";
import { InformerFactory, type Informer, type RestClient } from "../client/index.js";
import { exponentialBuckets, type MetricsRegistry } from "../component/metrics/index.js";
import { endpointSliceLabels } from "../api/discovery/labels.js";
import { Iptables } from "./iptables.js";
import { buildRules, chainNames } from "./rules.js";
import { portalsOf, UserspaceProxy } from "./userspace.js";
import { SERVICES, endpointSliceResource } from "../api/resource-refs.js";

export interface ProxierOptions {
  client: RestClient;
  naming: Naming;
  metrics?: MetricsRegistry;
  log: (line: string) => void;
  /** Prefix of our iptables chains (default ORCH). */
  chainPrefix?: string;
  /**
   * The data plane: iptables rules, a userspace proxy (listeners per cluster
   * IP and port, for machines without iptables), or auto (default): iptables
   * when iptables-restore and iptables-save are on PATH, else userspace.
   */
  mode?: ProxyMode;
  minSyncIntervalMs?: number;
  resyncIntervalMs?: number;
  signal: AbortSignal;
}

export type ProxyMode = "auto" | "iptables" | "userspace";
export const PROXY_MODES: readonly ProxyMode[] = ["auto", "iptables", "userspace"];

/** Whether the iptables commands the proxy runs are on this PATH. */
export function iptablesInstalled(path = process.env["PATH"] ?? ""): boolean {
  const dirs = path.split(":").filter((d) => d !== "");
  return ["iptables", "iptables-save", "iptables-restore"].every((cmd) => dirs.some((d) => existsSync(join(d, cmd))));
}

export interface Proxier {
  /** The data plane in use. */
  mode: "iptables" | "userspace";
  /** Both informers have synced and the first rules were written. */
  synced(): boolean;
  /** Resolves after the next sync that starts after this call. */
  nextSync(): Promise<void>;
}

function proxyMetrics(r: MetricsRegistry | undefined) {
  if (r === undefined) return undefined;
  return {
    duration: r.histogram({ name: "orchproxy_sync_proxy_rules_duration_seconds", help: "SyncProxyRules latency in seconds", buckets: exponentialBuckets(0.001, 2, 15) }),
    last: r.gauge({ name: "orchproxy_sync_proxy_rules_last_timestamp_seconds", help: "The last time proxy rules were successfully synced" }),
    rules: r.gauge({ name: "orchproxy_sync_proxy_rules_iptables_rules", help: "Number of iptables rules orch-proxy owns, by table", labelNames: ["table"] }),
    failures: r.counter({ name: "orchproxy_iptables_restore_failures_total", help: "Cumulative proxy iptables restore failures" }),
    serviceChanges: r.counter({ name: "orchproxy_sync_proxy_rules_service_changes_total", help: "Cumulative proxy rules Service changes" }),
    endpointChanges: r.counter({ name: "orchproxy_sync_proxy_rules_endpoint_changes_total", help: "Cumulative proxy rules Endpoint changes" }),
    noEndpoints: r.gauge({ name: "orchproxy_sync_proxy_rules_ports_without_endpoints", help: "Service ports with no ready endpoint as of the last sync" }),
  };
}

export function startProxier(o: ProxierOptions): Proxier {
  const names = chainNames(o.chainPrefix);
  const mode = o.mode === "iptables" || o.mode === "userspace" ? o.mode : iptablesInstalled() ? "iptables" : "userspace";
  const iptables = new Iptables(names);
  // The userspace proxy's device is named after the chain prefix, so two servers on one host keep theirs apart.
  const userspace = mode === "userspace" ? new UserspaceProxy(`${(o.chainPrefix ?? "ORCH").toLowerCase()}-svc`, o.log) : undefined;
  if (userspace !== undefined) {
    o.log(o.mode === "userspace"
      ? `orch-proxy: userspace mode: service cluster IPs are served by listeners on this node (on device ${userspace.device})`
      : `orch-proxy: iptables is not installed (iptables, iptables-save, iptables-restore not on PATH): serving service cluster IPs and node ports with the userspace proxy instead (listeners on this node, cluster IPs on device ${userspace.device}; apt-get install iptables for the kernel data plane)`);
  }
  const metrics = proxyMetrics(o.metrics);
  const informers = new InformerFactory({ client: o.client, log: o.log, ...(o.metrics ? { metrics: o.metrics } : {}) });
  const services: Informer<Service> = informers.informerFor<Service>({ resource: SERVICES });
  const slices: Informer<EndpointSlice> = informers.informerFor<EndpointSlice>({ resource: endpointSliceResource(o.naming) });
  const serviceLabel = endpointSliceLabels(o.naming).serviceName;
  const minInterval = o.minSyncIntervalMs ?? 1_000;
  let ready = false;
  let running = false;
  let pending = false;
  let lastSync = 0;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];
  const failures = syncFailureLog(o.log, minInterval);

  const sync = async (): Promise<void> => {
    running = true;
    pending = false;
    const started = performance.now();
    const done = waiters;
    waiters = [];
    try {
      const byService = new Map<string, EndpointSlice[]>();
      for (const s of slices.list()) {
        const owner = s.metadata?.labels?.[serviceLabel];
        if (owner === undefined) continue;
        const key = `${s.metadata?.namespace}/${owner}`;
        byService.set(key, [...(byService.get(key) ?? []), s]);
      }
      const slicesOf = (ns: string, name: string) => byService.get(`${ns}/${name}`) ?? [];
      if (userspace !== undefined) {
        const portals = portalsOf(services.list(), slicesOf);
        await userspace.sync(portals);
        metrics?.noEndpoints.set({}, portals.filter((p) => p.address !== "0.0.0.0" && p.endpoints.length === 0).length);
      } else {
        const rules = buildRules(services.list(), slicesOf, names);
        await iptables.sync(rules);
        const lines = rules.restore.split("\n");
        const nat = lines.indexOf("*filter");
        metrics?.rules.set({ table: "nat" }, lines.slice(0, nat).filter((l) => l.startsWith("-A ")).length);
        metrics?.rules.set({ table: "filter" }, lines.slice(nat).filter((l) => l.startsWith("-A ")).length);
        metrics?.noEndpoints.set({}, rules.withoutEndpoints);
      }
      metrics?.duration.observe({}, (performance.now() - started) / 1000);
      metrics?.last.set({}, Date.now() / 1000);
      ready = true;
      failures.succeeded();
    } catch (err) {
      metrics?.failures.inc({});
      failures.failed(err as NodeJS.ErrnoException);
      pending = true;
    } finally {
      lastSync = performance.now();
      running = false;
      for (const w of done) w();
      if (pending) schedule();
    }
  };

  const schedule = (): void => {
    pending = true;
    if (running || timer !== undefined || o.signal.aborted || !(services.hasSynced() && slices.hasSynced())) return;
    const wait = Math.max(0, lastSync + failures.delayMs() - performance.now());
    timer = setTimeout(() => {
      timer = undefined;
      void sync();
    }, wait);
  };

  const changed = (counter: "serviceChanges" | "endpointChanges") => ({
    onAdd: () => { metrics?.[counter].inc({}); schedule(); },
    onUpdate: () => { metrics?.[counter].inc({}); schedule(); },
    onDelete: () => { metrics?.[counter].inc({}); schedule(); },
  });
  services.addEventHandler(changed("serviceChanges"));
  slices.addEventHandler(changed("endpointChanges"));
  informers.start(o.signal);
  void informers.waitForSync(o.signal).then((ok) => ok && schedule());
  const resync = setInterval(schedule, o.resyncIntervalMs ?? 30_000);
  resync.unref();
  o.signal.addEventListener("abort", () => {
    clearInterval(resync);
    clearTimeout(timer);
    // The userspace listeners die with the process anyway; the device and its addresses would not.
    void userspace?.close();
  }, { once: true });

  return {
    mode,
    synced: () => ready,
    nextSync: () => new Promise<void>((resolve) => {
      waiters.push(resolve);
      schedule();
    }),
  };
}

/** The longest wait between two failed syncs. */
const MAX_BACKOFF_MS = 60_000;

/**
 * Failed syncs: each one doubles the wait before the next (from the minimum
 * sync interval up to a minute), and a failure is logged when its message
 * changes, not on every retry. A missing iptables binary is said once, with
 * what to install and what works without it.
 */
export function syncFailureLog(log: (line: string) => void, minIntervalMs: number) {
  let streak = 0;
  let lastMessage: string | undefined;
  const delayMs = () => Math.min(MAX_BACKOFF_MS, minIntervalMs * 2 ** streak);
  return {
    delayMs,
    failed(err: NodeJS.ErrnoException) {
      streak = Math.min(streak + 1, 16);
      if (err.message === lastMessage) return;
      lastMessage = err.message;
      if (err.code === "ENOENT") {
        log(`orch-proxy: ${err.message}: iptables is not installed (apt-get install iptables). Until it is, Service cluster IPs and NodePorts are not programmed on this machine; pods still reach each other by pod IP. Retrying with back-off up to ${MAX_BACKOFF_MS / 1000}s`);
      } else {
        log(`orch-proxy: syncing rules failed (retrying with back-off up to ${MAX_BACKOFF_MS / 1000}s; the same error is not logged again): ${err.message}`);
      }
    },
    succeeded() {
      if (streak > 0) log(`orch-proxy: rules synced after ${streak === 16 ? "many" : streak} failed attempt${streak === 1 ? "" : "s"}`);
      streak = 0;
      lastMessage = undefined;
    },
  };
}
