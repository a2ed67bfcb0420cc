// endpoints: the legacy address list behind a service (deprecated upstream in
// favor of EndpointSlice, still what kubectl and many tools read). PUT may
// create (the endpoints controller writes that way); the table lists up to
// three ip:port pairs, as `kubectl get endpoints` does.

import { isIP } from "node:net";
import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import { isValidPortNum, validateDNS1123Label, validateProtocol } from "./validation.js";
import type { Endpoints } from "./types.js";

function validateEndpoints(ep: Endpoints): FieldError[] {
  const errs: FieldError[] = [];
  (ep.subsets ?? []).forEach((ss, i) => {
    const path = `subsets[${i}]`;
    for (const list of ["addresses", "notReadyAddresses"] as const) {
      (ss?.[list] ?? []).forEach((a, j) => {
        const p = `${path}.${list}[${j}]`;
        if (!a?.ip) errs.push(field.required(`${p}.ip`, ""));
        else if (isIP(a.ip) === 0) errs.push(field.invalid(`${p}.ip`, a.ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
        if (a?.hostname) errs.push(...validateDNS1123Label(a.hostname, `${p}.hostname`));
      });
    }
    const ports = ss?.ports ?? [];
    ports.forEach((port, j) => {
      const p = `${path}.ports[${j}]`;
      if (ports.length > 1 && !port?.name) errs.push(field.required(`${p}.name`, ""));
      else if (port?.name) errs.push(...validateDNS1123Label(port.name, `${p}.name`));
      for (const msg of isValidPortNum(port?.port ?? 0)) errs.push(field.invalid(`${p}.port`, port?.port ?? 0, msg));
      errs.push(...validateProtocol(port?.protocol, `${p}.protocol`));
    });
  });
  return errs;
}

/** `10.0.0.1:80,10.0.0.2:80 + 3 more...`, `<none>` without subsets (upstream's formatEndpoints). */
export function formatEndpoints(ep: Endpoints): string {
  const subsets = ep.subsets ?? [];
  if (subsets.length === 0) return "<none>";
  const max = 3;
  const list: string[] = [];
  let count = 0;
  let more = false;
  for (const ss of subsets) {
    const addresses = ss?.addresses ?? [];
    const ports = ss?.ports ?? [];
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(a?.ip ?? "");
      }
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        const ip = a?.ip ?? "";
        list.push(`${ip.includes(":") ? `[${ip}]` : ip}:${port?.port ?? 0}`);
      }
    }
  }
  const joined = list.join(",");
  return more ? `${joined} + ${count - max} more...` : joined;
}

export function endpointsResource(): ResourceDefinition {
  return defineResource<Endpoints>({
    group: "",
    versions: ["v1"],
    resource: "endpoints",
    singular: "endpoints",
    kind: "Endpoints",
    namespaced: true,
    shortNames: ["ep"],
    schema: `${CORE_V1}.Endpoints`,
    allowCreateOnUpdate: true,

    validate: validateEndpoints,
    validateUpdate: validateEndpoints,

    table: nameAgeTable<Endpoints>({
      columns: [{ name: "Endpoints", type: "string", description: "Addresses and ports of the endpoints.", priority: 0 }],
      cells: (ep) => [formatEndpoints(ep)],
    }),
  });
}
