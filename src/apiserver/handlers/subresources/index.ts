// The API server's code for subresources that are more than a get, update
// or patch of their parent object, by declaration name (the declarations:
// src/api/subresources/). A kind's declaration says which subresources it has
// and which verbs they serve; this table says how the ones with code of their
// own are served. The kinds cannot point at this code themselves: they sit a
// layer below the API server (docs/architecture.md).

import type { ResourceDefinition, Subresource, SubresourceVerb } from "../../../api/resource.js";
import { methodNotSupported } from "../../../machinery/index.js";
import { proxyPodPortForward, proxyPodStream } from "../pod-exec.js";
import { handlePodLog } from "../pod-log.js";
import type { SubresourceHandlers, UpgradeRequest } from "../request.js";
import { bind } from "./binding.js";
import { scaleHandlers } from "./scale.js";
import { requestToken } from "./token.js";
import { evict } from "./eviction.js";

/** Subresources with code of their own, by name; the verbs not here are served generically (handlers/resource.ts). */
export const SUBRESOURCE_HANDLERS: Readonly<Record<string, SubresourceHandlers>> = {
  scale: scaleHandlers,
  binding: { create: bind },
  eviction: { create: evict },
  log: { get: handlePodLog },
  token: { create: requestToken },
};

/** Connect subresources (declared `connect: true`), served on an HTTP/1.1 Upgrade (./upgrade.ts). */
export const UPGRADE_HANDLERS: Readonly<Record<string, (r: UpgradeRequest) => Promise<void>>> = {
  exec: proxyPodStream,
  attach: proxyPodStream,
  portforward: proxyPodPortForward,
};

const VERBS: Readonly<Record<string, SubresourceVerb>> = { GET: "get", PUT: "update", PATCH: "patch", POST: "create" };

/**
 * The verb an HTTP method asks of `subresource`; a 405 naming
 * `resource/subresource` when the declaration does not list it (DELETE
 * never: deleting a subresource must not delete its object).
 */
export function subresourceVerb(def: ResourceDefinition, subresource: Subresource, method: string): SubresourceVerb {
  const verb = VERBS[method.toUpperCase()];
  if (verb === undefined || !subresource.verbs.includes(verb)) {
    throw methodNotSupported({ group: def.group, resource: `${def.resource}/${subresource.name}` }, verb ?? method.toLowerCase());
  }
  return verb;
}
