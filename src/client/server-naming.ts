// Which naming table a server uses, read from its coordination group's name
// (coordination.orch.io, or coordination.k8s.io on a server presenting
// upstream's names), so leases and groups land where that server's tools look.

import { namingFor, type Naming } from "../machinery/naming.js";
import type { RestClient } from "./rest.js";

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
