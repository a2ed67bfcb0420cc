// endpointslices (discovery.<suffix>/v1): upstream's validation essentials
// (address type and addresses, at most 1000 endpoints and 100 addresses each,
// port names, numbers and protocols, addressType immutable) and the
// `kubectl get endpointslices` columns (ADDRESSTYPE, PORTS, ENDPOINTS).

import { isIP } from "node:net";
import { field, isDNS1123Subdomain, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { isValidPortNum, validateDNS1123Label, validateDNS1123Subdomain, validateProtocol } from "../core/validation.js";
import { DISCOVERY_V1 } from "./schemas.js";
import type { EndpointSlice } from "./types.js";

const ADDRESS_TYPES = ["IPv4", "IPv6", "FQDN"];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;

function validateAddress(type: string | undefined, address: string, path: string): FieldError[] {
  if (type === "IPv4" && isIP(address) !== 4) return [field.invalid(path, address, "must be a valid IPv4 address")];
  if (type === "IPv6" && isIP(address) !== 6) return [field.invalid(path, address, "must be a valid IPv6 address")];
  if (type === "FQDN") return isDNS1123Subdomain(address).map((msg) => field.invalid(path, address, msg));
  return [];
}

export function validateEndpointSlice(slice: EndpointSlice): FieldError[] {
  const errs: FieldError[] = [];
  const type = slice.addressType;
  if (!type) errs.push(field.required("addressType", ""));
  else if (!ADDRESS_TYPES.includes(type)) errs.push(field.notSupported("addressType", type, ADDRESS_TYPES));
  const endpoints = slice.endpoints ?? [];
  if (endpoints.length > MAX_ENDPOINTS) errs.push(field.tooMany("endpoints", endpoints.length, MAX_ENDPOINTS));
  endpoints.forEach((ep, i) => {
    const path = `endpoints[${i}]`;
    const addresses = ep?.addresses ?? [];
    if (addresses.length === 0) errs.push(field.required(`${path}.addresses`, "must contain at least 1 address"));
    else if (addresses.length > MAX_ADDRESSES) errs.push(field.tooMany(`${path}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => errs.push(...validateAddress(type, a, `${path}.addresses[${j}]`)));
    if (ep?.hostname) errs.push(...validateDNS1123Label(ep.hostname, `${path}.hostname`));
    if (ep?.nodeName) errs.push(...validateDNS1123Subdomain(ep.nodeName, `${path}.nodeName`));
  });
  const ports = slice.ports ?? [];
  if (ports.length > MAX_PORTS) errs.push(field.tooMany("ports", ports.length, MAX_PORTS));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const path = `ports[${i}]`;
    const name = p?.name ?? "";
    if (name !== "") errs.push(...validateDNS1123Label(name, `${path}.name`));
    if (names.has(name)) errs.push(field.duplicate(`${path}.name`, name));
    names.add(name);
    if (p?.port != null) for (const msg of isValidPortNum(p.port)) errs.push(field.invalid(`${path}.port`, p.port, msg));
    errs.push(...validateProtocol(p?.protocol ?? undefined, `${path}.protocol`));
  });
  return errs;
}

/** upstream's formatDiscoveryPorts: `80,443`, `<unset>` for a port without number, `<none>` without ports. */
export function formatSlicePorts(slice: EndpointSlice): string {
  const ports = slice.ports ?? [];
  if (ports.length === 0) return "<unset>";
  return moreThanThree(ports.map((p) => (p?.port == null ? "<unset>" : String(p.port))));
}

/** upstream's formatDiscoveryEndpoints: the first three addresses, then `+ N more...`. */
export function formatSliceEndpoints(slice: EndpointSlice): string {
  const addresses = (slice.endpoints ?? []).flatMap((ep) => ep?.addresses ?? []);
  if (addresses.length === 0) return "<unset>";
  return moreThanThree(addresses);
}

function moreThanThree(items: string[]): string {
  return items.length > 3 ? `${items.slice(0, 3).join(",")} + ${items.length - 3} more...` : items.join(",");
}

export function endpointSlicesResource(naming: Naming): ResourceDefinition {
  return defineResource<EndpointSlice>({
    group: `discovery.${naming.groupSuffix}`,
    versions: ["v1"],
    resource: "endpointslices",
    singular: "endpointslice",
    kind: "EndpointSlice",
    namespaced: true,
    schema: `${DISCOVERY_V1}.EndpointSlice`,

    defaults(slice) {
      for (const p of slice.ports ?? []) if (p && typeof p === "object" && !p.protocol) p.protocol = "TCP";
    },
    validate: validateEndpointSlice,
    validateUpdate(slice, old) {
      const errs = validateEndpointSlice(slice);
      if (slice.addressType !== old.addressType) errs.push(field.immutable("addressType", slice.addressType ?? ""));
      return errs;
    },

    table: nameAgeTable<EndpointSlice>({
      columns: [
        { name: "AddressType", type: "string", description: "The type of address carried by this EndpointSlice.", priority: 0 },
        { name: "Ports", type: "string", description: "The ports exposed by the endpoints.", priority: 0 },
        { name: "Endpoints", type: "string", description: "The addresses of the endpoints.", priority: 0 },
      ],
      cells: (slice) => [slice.addressType ?? "", formatSlicePorts(slice), formatSliceEndpoints(slice)],
    }),
  });
}
