// Which naming table a server uses, read from its coordination group's name
// (coordination.orch.io, or coordination.k8s.io on a server presenting
// upstream's names), so leases and groups land where that server's tools look.

import { componentName, namingFor, type ComponentName, type Naming } from "../machinery/naming.js";
import { RestClient } from "./rest.js";
import type { ClientConfig } from "./kubeconfig.js";
import type { RestClientOptions } from "./rest/types.js";

export async function namingOfServer(client: RestClient): Promise<Naming> {
  try {
    const res = await client.request({ method: "GET", path: "/apis", headers: { accept: "application/json" } });
    const groups = (JSON.parse(res.body.toString("utf8")) as { groups?: { name: string }[] }).groups ?? [];
    const coordination = groups.find((g) => g.name.startsWith("coordination."));
    if (coordination !== undefined) return namingFor(coordination.name.slice("coordination.".length));
  } catch {
    // fall through: the default table
  }
  return namingFor();
}

/**
 * A client for `component` named as the server's table names it (user agent
 * kube-controller-manager on a k8s.io server, orch-controller-manager
 * otherwise): the server is asked once which table it presents.
 */
export async function componentClient(config: ClientConfig, component: ComponentName, options: Omit<RestClientOptions, "userAgent"> = {}): Promise<RestClient> {
  const probe = new RestClient(config);
  try {
    return new RestClient(config, { ...options, userAgent: componentName(await namingOfServer(probe), component) });
  } finally {
    probe.close();
  }
}
