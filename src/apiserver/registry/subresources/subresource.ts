// A subresource as a declaration (STYLE.md: declarations, not code paths):
// its name, the verbs it serves, how updates through it are prepared and
// checked (./strategy.ts), and, when it is not a plain get/update/patch of
// its parent, the handler that serves it. A kind lists the declarations it
// has in `ResourceDefinition.subresources`; routing (handlers/resource.ts,
// ./upgrade.ts), discovery, OpenAPI, the store and managed fields all read
// them, so adding a subresource is one declaration file and one line in the
// kind. Seed 000, "Endpoints": sub-resources.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ResourceDefinition } from "../../../api/resource.js";
import { methodNotSupported, type ApiObject } from "../../../machinery/index.js";
import type { HandlerDeps, ResourceRequest } from "../../handlers/request.js";
import type { ResourcePath } from "../../routing.js";
import type { RegistryStore } from "../store.js";
import type { SubresourceStrategy } from "./strategy.js";

/** What a request on a subresource can do (upstream's verbs; DELETE never reaches a subresource). */
export type SubresourceVerb = "get" | "update" | "patch" | "create";

/** A request routed to one object's subresource. */
export interface SubresourceRequest extends ResourceRequest {
  readonly name: string;
  readonly subresource: Subresource;
}

/** An HTTP/1.1 Upgrade routed to a connect subresource (exec, attach). */
export interface UpgradeRequest extends HandlerDeps {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  path: ResourcePath;
  query: URLSearchParams;
  store: RegistryStore;
  readonly name: string;
  readonly subresource: Subresource;
}

export type SubresourceHandler = (r: SubresourceRequest) => Promise<void>;

export interface Subresource<T extends ApiObject = ApiObject> extends SubresourceStrategy<T> {
  /** The verbs served, as discovery lists them; any other method is a 405. */
  readonly verbs: readonly SubresourceVerb[];
  /** The kind discovery names for its bodies when it is not the parent's (Scale, Binding, PodExecOptions). */
  readonly responseKind?: { readonly group: string; readonly version: string; readonly kind: string };
  /** managedFields entries of writes here carry this subresource's name (status, scale, ephemeralcontainers). */
  readonly recordsManager?: boolean;
  /**
   * Top-level fields no manager owns after a write (upstream's ResetFieldsStrategy):
   * `here` on writes through this subresource, `main` on the main resource.
   */
  readonly resetFields?: { readonly here: readonly string[]; readonly main: readonly string[] };
  /**
   * Verbs served by code of the subresource's own; the others among `verbs`
   * are a get, update or patch of the parent object through `prepareUpdate`.
   */
  readonly handler?: { readonly [V in SubresourceVerb]?: SubresourceHandler };
  /** Served only as an HTTP/1.1 Upgrade (GET or POST, as `verbs` allow); a plain request is a 400. */
  readonly upgrade?: (r: UpgradeRequest) => Promise<void>;
}

/** The declaration of `def`'s subresource `name`, if it has one. */
export function findSubresource(def: ResourceDefinition, name: string): Subresource | undefined {
  return def.subresources?.find((s) => s.name === name);
}

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
