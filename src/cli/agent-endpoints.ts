// What the node agent adds to its component port (upstream's kubelet port,
// 10250) in every command that runs one (`orch nodeagent`, `orch server` and
// `orch server --join`): /containerLogs/ behind the component base's auth
// and /stats/summary, /metrics/{resource,probes,cadvisor,statscollector}
// (a client certificate the cluster CA signed, or a token the API server
// accepts; anonymous callers get 401) and /readyz's `pleg` check. The agent
// starts after its port, so both read it through `agent()`.

import { conditionCheck, rawReply, type ExtraHandler, type HealthCheck, type UpgradeHandler } from "../component/index.js";
import { ATTACH_PATH, CHECKPOINT_PATH, CONTAINER_LOGS_PATH, EXEC_PATH, PORT_FORWARD_PATH, STATS_PATHS, type NodeAgent } from "../nodeagent/index.js";

export function agentEndpoints(agent: () => NodeAgent | undefined): { extra: Record<string, ExtraHandler>; upgrades: Record<string, UpgradeHandler>; readyChecks: HealthCheck[] } {
  return {
    // kubectl exec's and attach's WebSockets, behind the same auth.
    upgrades: { [EXEC_PATH]: whenStarted(agent, (a) => a.serveExec), [ATTACH_PATH]: whenStarted(agent, (a) => a.serveAttach), [PORT_FORWARD_PATH]: whenStarted(agent, (a) => a.servePortForward) },
    extra: {
      [CONTAINER_LOGS_PATH]: whenAgent(agent, (a) => a.serveContainerLogs),
      // POST /checkpoint/{namespace}/{pod}/{container} (nodes/checkpoint).
      [CHECKPOINT_PATH]: Object.assign(whenAgent(agent, (a) => a.serveCheckpoint), { methods: ["POST"] }),
      // /stats/summary and the resource, probe and container metrics (nodes/stats, nodes/metrics).
      ...Object.fromEntries(STATS_PATHS.map((p) => [p, whenAgent(agent, (a) => a.serveStats)])),
    },
    readyChecks: [conditionCheck("pleg", () => agent()?.healthy() ?? false, "the pod lifecycle event generator has not relisted the runtime yet")],
  };
}

/** A handler of the agent once it runs; before, a 503. */
function whenAgent(agent: () => NodeAgent | undefined, pick: (a: NodeAgent) => ExtraHandler): ExtraHandler {
  return async (req, res, url) => {
    const a = agent();
    if (a !== undefined) return pick(a)(req, res, url);
    const body = "the node agent is starting\n";
    res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
}

/** An upgrade handler of the agent once it runs; before, a 503. */
function whenStarted(agent: () => NodeAgent | undefined, pick: (a: NodeAgent) => UpgradeHandler): UpgradeHandler {
  return (req, socket, head, url) => {
    const a = agent();
    if (a !== undefined) return pick(a)(req, socket, head, url);
    rawReply(socket, 503, "the node agent is starting\n");
  };
}
