// The controller manager: picks controllers by `--controllers` (`*`, `foo`, `-foo`) and runs them with
// one shared client, informer factory and discovery cache, behind a leader lease when asked. Used by
// `orch controller-manager` and, in-process, by `orch server`.

import type { Naming } from "../machinery/naming.js";
import { DiscoveryCache, InformerFactory, LeaderElector, namingOfServer, type RestClient } from "../client/index.js";
import { errorMessage, type ControllerConfig, type ControllerContext, type ControllerDescriptor } from "./controller.js";
import { daemonSetController } from "./daemonset/controller.js";
import { deploymentController } from "./deployment/controller.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { garbageCollectorController } from "./garbage-collector/controller.js";
import { namespaceController } from "./namespace/controller.js";
import { replicaSetController, replicationControllerController } from "./replicaset/controller.js";
import { statefulSetController } from "./statefulset/controller.js";
import { nodeLifecycleController } from "./node-lifecycle/controller.js";
import { taintEvictionController } from "./node-lifecycle/taint-eviction.js";
import { jobController } from "./job/controller.js";
import { cronJobController } from "./cronjob/controller.js";
import { ttlAfterFinishedController } from "./ttl-after-finished/controller.js";
import { clusterRoleAggregationController } from "./clusterrole-aggregation/controller.js";
import { podGcController } from "./podgc/controller.js";
import { serviceAccountController } from "./serviceaccount/controller.js";
import { rootCaPublisherController } from "./root-ca-publisher/controller.js";
import { serviceAccountTokenController } from "./serviceaccount/token-controller.js";
import { endpointsController } from "./endpoint/controller.js";
import { endpointSliceController } from "./endpointslice/controller.js";
import { endpointSliceMirroringController } from "./endpointslicemirroring/controller.js";
import { persistentVolumeBinderController } from "./persistentvolume/binder.js";
import { pvcProtectionController, pvProtectionController } from "./persistentvolume/protection.js";
import { localPathProvisionerController } from "./local-path-provisioner/controller.js";
import { csrApprovingController, csrSigningController, tokenCleanerController } from "./certificates/index.js";
import { resourceQuotaController } from "./resourcequota/controller.js";
import { disruptionController } from "./disruption/controller.js";
import { hpaController } from "./hpa/controller.js";
import { serviceAccountClients } from "./service-account-credentials.js";

/** Every controller this manager knows, in start order. */
export const CONTROLLERS: readonly ControllerDescriptor[] = [
  namespaceController,
  garbageCollectorController,
  replicaSetController,
  replicationControllerController,
  deploymentController,
  statefulSetController,
  daemonSetController,
  nodeLifecycleController,
  taintEvictionController,
  jobController,
  cronJobController,
  ttlAfterFinishedController,
  clusterRoleAggregationController,
  podGcController,
  serviceAccountController,
  serviceAccountTokenController,
  rootCaPublisherController,
  endpointsController,
  endpointSliceController,
  endpointSliceMirroringController,
  persistentVolumeBinderController,
  pvcProtectionController,
  pvProtectionController,
  localPathProvisionerController,
  csrApprovingController,
  csrSigningController,
  tokenCleanerController,
  resourceQuotaController,
  disruptionController,
  hpaController,
];

export interface LeaderElectionSettings {
  /** Default: the naming table's system namespace (orch-system). */
  namespace?: string;
  /** Default: <product>-controller-manager (upstream: kube-controller-manager). */
  name?: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ControllerManagerOptions {
  client: RestClient;
  /** Informers shared with other parts of the process (`orch server`): each run takes a view of them (InformerFactory.view) instead of its own caches. */
  informers?: InformerFactory;
  /** `--controllers` (default ["*"]). */
  controllers?: readonly string[];
  /** Take the leader lease first (default true). */
  leaderElect?: boolean;
  leaderElection?: LeaderElectionSettings;
  naming?: Naming;
  /** Stops everything (and releases the lease). */
  signal: AbortSignal;
  log?: (line: string) => void;
  /** The controller set to choose from (tests). */
  available?: readonly ControllerDescriptor[];
  /** The component's metrics registry. */
  metrics?: MetricsRegistry;
  /** Controller tuning flags. */
  config?: ControllerConfig;
  /** The `manager` label of running_managed_controllers (default "orch-controller-manager"). */
  managerName?: string;
  /** `--use-service-account-credentials`: each controller talks as its own service account (service-account-credentials.ts). */
  useServiceAccountCredentials?: boolean;
}

/**
 * Resolves `--controllers` against the known controllers: `*` is every
 * controller on by default, `name` adds one, `-name` removes one. Unknown
 * names are an error naming them.
 */
export function selectControllers(names: readonly string[], available: readonly ControllerDescriptor[] = CONTROLLERS): ControllerDescriptor[] {
  const find = (name: string) => available.find((c) => c.name === name || (c.aliases ?? []).includes(name));
  const unknown = names.filter((n) => n !== "*" && find(n.replace(/^-/, "")) === undefined);
  if (unknown.length > 0) {
    throw new Error(`unknown controllers: ${unknown.join(", ")} (known: ${available.map((c) => c.name).join(", ")})`);
  }
  const wildcard = names.includes("*");
  return available.filter((c) => {
    const named = (n: string) => n === c.name || (c.aliases ?? []).includes(n);
    if (names.some((n) => n.startsWith("-") && named(n.slice(1)))) return false;
    if (names.some(named)) return true;
    return wildcard && c.enabledByDefault;
  });
}

/** The lease the controller manager's replicas compete for. */
export function controllerManagerLease(naming: Naming): { namespace: string; name: string } {
  return { namespace: naming.systemNamespace, name: naming.systemNamespace.replace(/-system$/, "") + "-controller-manager" };
}

/**
 * Runs the selected controllers until the signal fires. With leader
 * election, they run only while this replica holds the lease; losing it
 * rejects (the process should exit, as upstream's does, and start over).
 */
export async function runControllerManager(options: ControllerManagerOptions): Promise<void> {
  const log = options.log ?? (() => {});
  const naming = options.naming ?? (await namingOf(options.client));
  const selected = selectControllers(options.controllers ?? ["*"], options.available ?? CONTROLLERS);
  if (selected.length === 0) {
    log("controller-manager: no controllers selected");
    return;
  }
  const start = (signal: AbortSignal) =>
    runControllers({ client: options.client, controllers: selected, naming, signal, log, ...pick(options, ["metrics", "config", "managerName", "useServiceAccountCredentials", "informers"]) });
  if (options.leaderElect === false) return start(options.signal);

  const settings = options.leaderElection ?? {};
  const lease = { ...controllerManagerLease(naming), ...pick(settings, ["namespace", "name"]) };
  let led = false;
  const elector = new LeaderElector({
    client: options.client,
    lease,
    naming,
    ...pick(settings, ["identity", "leaseDurationMs", "renewDeadlineMs", "retryPeriodMs"]),
    log,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    onStartedLeading: async (signal) => {
      led = true;
      await start(signal);
    },
    onNewLeader: (identity) => log(`controller-manager: lease ${lease.namespace}/${lease.name} is held by ${identity}`),
  });
  await elector.run(options.signal);
  if (led && !options.signal.aborted) throw new Error(`leader election lost: lease ${lease.namespace}/${lease.name}`);
}

interface RunControllersOptions extends Pick<ControllerContext, "client" | "naming" | "signal" | "log" | "metrics" | "config">, Pick<ControllerManagerOptions, "informers"> {
  controllers: readonly ControllerDescriptor[];
  managerName?: string;
  useServiceAccountCredentials?: boolean;
}

async function runControllers(options: RunControllersOptions): Promise<void> {
  const { client, signal, log, metrics } = options;
  const context: ControllerContext = {
    client,
    informers: options.informers?.view() ?? new InformerFactory({ client, log, ...pick(options, ["metrics"]) }),
    discovery: new DiscoveryCache({ client }),
    naming: options.naming,
    signal,
    log,
    ...pick(options, ["metrics", "config"]),
  };
  // Seed 002: running_managed_controllers{manager,name} is 1 while a controller runs.
  const running = metrics?.gauge({
    name: "running_managed_controllers", stabilityLevel: "BETA", labelNames: ["manager", "name"],
    help: "Indicates where instances of a controller are currently running",
  });
  const manager = options.managerName ?? "orch-controller-manager";
  const accounts = options.useServiceAccountCredentials
    ? serviceAccountClients({ root: client, naming: options.naming, signal, log, ...pick(options, ["metrics"]) })
    : undefined;
  const runs = options.controllers.map(async (c) => {
    const labels = { manager, name: c.name };
    running?.set(labels, 1);
    // Its own account's client (informers and discovery stay shared, on the manager's credentials).
    const own = accounts === undefined ? context : { ...context, client: await accounts.clientFor(c.name).catch(() => client) };
    if (signal.aborted) return running?.remove(labels);
    return c.run(own)
      .catch((err: unknown) => log(`controller-manager: ${c.name} stopped with an error: ${errorMessage(err)}`))
      .finally(() => running?.remove(labels));
  });
  context.informers.start(signal);
  log(`controller-manager: started ${options.controllers.map((c) => c.name).join(", ")}`);
  await Promise.all(runs);
  accounts?.close();
}

async function namingOf(client: RestClient): Promise<Naming> {
  return namingOfServer(client);
}

function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}
