// `orch controller-manager`: the built-in controllers (namespace, garbage
// collector, node lifecycle, jobs, endpoints...), reaching the API server
// through --kubeconfig like any client, behind the leader lease, and
// serving the component base (health, metrics, z-pages) on --secure-port.

import { baseFlags, flag, secureServingFlags, tlsServingFlags } from "../component/index.js";
import { componentClient, loadKubeconfig } from "../client/index.js";
import { CONTROLLERS, runControllerManager, selectControllers } from "../controllers/index.js";
import { defineCommand } from "./command.js";
import { controllerConfigFromFlags, controllerFlags, credentialFlags, signingConfigFromFlags, signingFlags } from "./controller-flags.js";
import { serveComponent } from "./serve-component.js";

const GENERIC = "Generic flags";

export const command = defineCommand({
  name: "controller-manager",
  summary: "the built-in controllers (port 10257)",
  description:
    "The orch controller manager runs the control loops that move the cluster toward its desired state: " +
    "namespaces, garbage collection, node lifecycle, workloads and jobs.",
  flags: {
    kubeconfig: flag.string({
      section: GENERIC,
      description: "Path to a kubeconfig file with the API server's address and credentials (required to run; orch apiserver writes one into its data dir).",
    }),
    controllers: flag.strings({
      section: GENERIC,
      default: ["*"],
      description:
        "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', " +
        `'-foo' disables the controller named 'foo'. All controllers: ${CONTROLLERS.map((c) => c.name).join(", ")}.`,
    }),
    "leader-elect": flag.bool({
      section: GENERIC,
      default: true,
      description: "Take a leader lease before running the controllers, so only one replica acts at a time.",
    }),
    ...controllerFlags,
    ...signingFlags,
    ...credentialFlags(false),
    ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 10257 }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  validate(flags) {
    if (!flags.get("kubeconfig")) return "--kubeconfig is required (orch apiserver writes one into its data dir: .orch/admin.kubeconfig)";
    try {
      selectControllers(flags.get("controllers"));
      return undefined;
    } catch (err) {
      return `--controllers: ${(err as Error).message}`;
    }
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    const server = await serveComponent({ name: "orch-controller-manager", flags, context });
    const client = await componentClient(server.apiServer ?? loadKubeconfig(flags.get("kubeconfig")), "controller-manager", { metrics: server.metrics });
    try {
      log(`${context.command}: running against ${client.config.server}${flags.get("leader-elect") ? " (leader election on)" : " (leader election off)"}`);
      await runControllerManager({
        client,
        controllers: flags.get("controllers"),
        leaderElect: flags.get("leader-elect"),
        useServiceAccountCredentials: flags.get("use-service-account-credentials"),
        config: { ...controllerConfigFromFlags(flags.values), statefulSetAutoDeletePVC: context.featureGates.enabled("StatefulSetAutoDeletePVC"), signing: signingConfigFromFlags((name) => flags.get(name)) },
        signal: context.signal,
        log,
        metrics: server.metrics,
      });
    } finally {
      client.close();
      await server.close();
    }
    log(`${context.command}: stopped`);
    return 0;
  },
});
