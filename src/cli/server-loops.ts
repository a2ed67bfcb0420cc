// `orch server`'s control loops: the controller manager and the scheduler,
// each leader-elected and supervised, over one set of shared informers, with
// their own HTTPS ports (/healthz, /metrics, ...) as when they run alone.
// They run on their own thread by default (server-loops-thread.ts) and talk
// to the API server as separate components do, over its HTTPS port.

import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { componentRegistry, conditionCheck, startComponentServer, type ComponentServerOptions, type RunningComponentServer } from "../component/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { InformerFactory, RestClient, apiServerCheck, loadKubeconfig, type ClientConfig } from "../client/index.js";
import { runControllerManager } from "../controllers/index.js";
import { startScheduler } from "../scheduler/index.js";
import { componentName, namingFor } from "../machinery/naming.js";
import { sleep } from "../machinery/until.js";
import type { RunContext } from "./command.js";
import { controllerConfigFromFlags, signingConfigFromFlags } from "./controller-flags.js";
import type { ServerFlags } from "./server-flags.js";

export interface ControlLoopsOptions {
  flags: ServerFlags;
  /** Its signal stops the loops (releasing their leases). */
  context: RunContext;
  /** The admin kubeconfig the API server wrote: the loops' clients reach the server through it. */
  kubeconfigPath: string;
  log: (line: string) => void;
}

export interface ControlLoops {
  /** The parts' HTTPS ports, for the ready line. */
  readonly ports: readonly { name: string; port: number }[];
  /** Resolves once the context's signal stopped the loops and their ports and clients are closed. */
  readonly done: Promise<void>;
}

/**
 * Starts the controller manager and (unless --disable-scheduler) the
 * scheduler. Rejects when a part's port cannot be served (nothing is left
 * running then); the message names the port.
 */
export async function startControlLoops(o: ControlLoopsOptions): Promise<ControlLoops> {
  const { flags, context, log } = o;
  // Each part's registry is made first, so its client's rest_client_* and informer_* land on the part's own port.
  const metrics = { controllers: registryOf(context), scheduler: registryOf(context) };
  // Each part goes by its own name of the server's table (kube-controller-manager, kube-scheduler under k8s.io), as when it runs alone.
  const naming = namingFor(flags.get("api-group-suffix"));
  const cluster = loadKubeconfig(o.kubeconfigPath);
  const clients = {
    controllers: new RestClient(cluster, { userAgent: componentName(naming, "controller-manager"), metrics: metrics.controllers }),
    scheduler: new RestClient(cluster, { userAgent: componentName(naming, "scheduler"), metrics: metrics.scheduler }),
  };
  const ports: RunningComponentServer[] = [];
  let schedulerSynced = false;
  const portOf = async (flag: "controller-manager-port" | "scheduler-port", more: Partial<ComponentServerOptions>) => {
    if (flags.get(flag) < 0) return;
    ports.push(await servePort(flag, flags, flags.get("bind-address"), cluster, context, log, more));
  };
  try {
    await portOf("controller-manager-port", { metrics: metrics.controllers });
    if (!flags.get("disable-scheduler")) {
      await portOf("scheduler-port", {
        metrics: metrics.scheduler,
        readyChecks: [conditionCheck("sched-handler-sync", () => schedulerSynced, "the scheduler's caches have not synced")],
      });
    }
  } catch (err) {
    await Promise.all(ports.map((p) => p.close()));
    for (const c of Object.values(clients)) c.close();
    throw err;
  }
  // Leases as the separate components take them, so other replicas wait their turn. The identity is
  // stable per host and data folder: a server restarted after a crash takes its leases back at once
  // instead of waiting out their duration (its data folder is its own: lmdb locks it).
  const leaderElect = flags.get("leader-elect");
  const leaderElection = { identity: serverIdentity(flags.get("data-dir")) };
  const { signal } = context;
  // One cache per resource for the controller manager and the scheduler (pods and nodes are the bulk of
  // both), running for the server's life: a part that loses its lease drops its handlers, not the caches.
  const informers = new InformerFactory({ client: clients.controllers, log, metrics: metrics.controllers });
  informers.start(signal);
  const loops = [
    superviseElected("controller-manager", signal, log, () => runControllerManager({
      client: clients.controllers, leaderElect, leaderElection, signal, log, informers,
      useServiceAccountCredentials: flags.get("use-service-account-credentials"),
      // The local-path provisioner makes volumes here: this host is the node's.
      config: { ...controllerConfigFromFlags(flags.values), statefulSetAutoDeletePVC: context.featureGates.enabled("StatefulSetAutoDeletePVC"), localPathDir: join(flags.get("data-dir"), "volumes"), signing: signingConfigFromFlags((name) => flags.get(name), flags.get("data-dir")) },
      metrics: metrics.controllers,
    })),
  ];
  if (!flags.get("disable-scheduler")) {
    loops.push(
      superviseElected("scheduler", signal, log, () => startScheduler({
        client: clients.scheduler, leaderElect, leaderElection, signal, log, informers,
        metrics: metrics.scheduler,
        onStarted: (scheduler) => void scheduler.synced.then(() => (schedulerSynced = true)),
      })),
    );
  }
  const done = (async () => {
    await Promise.all(loops);
    await Promise.all(ports.map((p) => p.close()));
    for (const c of Object.values(clients)) c.close();
  })();
  return { ports: ports.map((p) => ({ name: p.name, port: p.port })), done };
}

/**
 * A part's HTTPS port. Its upstream default (10250, 10257, 10259) is tried
 * first; when that is in use and the flag was not given (a second server on
 * the same host), a free port is taken instead and the log says so. A port
 * given on the command line that is in use is an error.
 */
export async function servePort(flag: PortFlag, flags: ServerFlags, bindAddress: string, cluster: ClientConfig, context: RunContext, log: (line: string) => void, more: Partial<ComponentServerOptions> = {}): Promise<RunningComponentServer> {
  const name = PORT_FLAGS[flag];
  const serve = (port: number) => startComponentServer({ name, featureGates: context.featureGates, bindAddress, port, apiServer: apiServerCheck(cluster), log, ...more });
  const port = flags.get(flag);
  try {
    return await serve(port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || flags.isSet(flag) || port === 0) throw err;
    const running = await serve(0);
    log(`${name}: port ${port} is in use (another orch server on this host?): serving on ${running.port} instead (--${flag} sets one)`);
    return running;
  }
}

/** The parts' port flags and the names their ports serve under. */
const PORT_FLAGS = { "nodeagent-port": "orch-nodeagent", "controller-manager-port": "orch-controller-manager", "scheduler-port": "orch-scheduler" } as const;
export type PortFlag = keyof typeof PORT_FLAGS;

/** A part's metrics registry, as its own process would make it. */
export function registryOf(context: RunContext): MetricsRegistry {
  return componentRegistry({ featureGates: context.featureGates });
}

/**
 * Runs a leader-elected part (controller manager, scheduler) for the life of
 * the server. A part that loses its lease (renewals late past the renew
 * deadline: a frozen or overloaded process) stops, as upstream's do; their
 * separate processes then exit and are restarted by their supervisor. Here
 * the server is that supervisor: the part starts over and campaigns again,
 * rather than staying stopped while the server looks healthy.
 */
async function superviseElected(name: string, signal: AbortSignal, log: (line: string) => void, run: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    try {
      await run();
      return;
    } catch (err) {
      log(`${name} failed: ${(err as Error).message}`);
      if (signal.aborted) return;
      await sleep(1000, signal).catch(() => {});
      if (!signal.aborted) log(`${name}: starting again, campaigning for its lease`);
    }
  }
}

/** The leader-election identity of this server: the host name and a digest of its data folder's real path. */
function serverIdentity(dataDir: string): string {
  const digest = createHash("sha256").update(realpathSync(dataDir)).digest("hex").slice(0, 12);
  return `${hostname()}_orch-server-${digest}`;
}
