// What a request asks to do, worked out once from its method and parsed path
// (upstream's RequestInfo): the attributes an authorizer judges (and `kubectl
// auth can-i` asks about), audit records and limits classify. Pure.
// Upstream's rules, where they differ from the obvious reading:
//   - GET or HEAD without a name is `list`, or `watch` with ?watch; a list or
//     watch pinned to one object by `fieldSelector=metadata.name=X` names X;
//   - DELETE without a name is `deletecollection`;
//   - connect subresources (pods/exec) keep the method's verb (`get`, `create`);
//   - a namespace's own paths (`/api/v1/namespaces/NS[/status]`) are in NS;
//   - anything that is not a resource path (discovery, /healthz, /openapi/v2)
//     is a non-resource request: its verb is the method in lower case.

import { parseFieldSelector, pinnedName } from "../../machinery/index.js";
import type { ParsedPath } from "../routing.js";
import { queryBool } from "../../machinery/query-bool.js";

/** Empty strings where a part does not apply, as upstream (fixed shape). */
export interface RequestAttributes {
  /** False for non-resource URLs (discovery, health, OpenAPI, metrics). */
  readonly resourceRequest: boolean;
  /** get, list, watch, create, update, patch, delete, deletecollection; for non-resource URLs the method in lower case. */
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  /** The URL path as requested (what non-resource rules match). */
  readonly path: string;
}

const METHOD_VERBS: Readonly<Record<string, string>> = { POST: "create", GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" };

export function requestAttributes(method: string, url: URL, path: ParsedPath): RequestAttributes {
  const rawPath = url.pathname;
  if (path.kind !== "resource") {
    return { resourceRequest: false, verb: method.toLowerCase(), apiGroup: "", apiVersion: "", resource: "", subresource: "", namespace: "", name: "", path: rawPath };
  }
  let verb = METHOD_VERBS[method.toUpperCase()] ?? "";
  let name = path.name ?? "";
  if (name === "" && verb === "get") {
    verb = watchRequested(url.searchParams) ? "watch" : "list";
    name = pinnedObject(url.searchParams);
  } else if (name === "" && verb === "delete") {
    verb = "deletecollection";
  }
  const ownNamespace = path.resource === "namespaces" && path.namespace === undefined ? path.name : undefined;
  return {
    resourceRequest: true,
    verb,
    apiGroup: path.group,
    apiVersion: path.version,
    resource: path.resource,
    subresource: path.subresource ?? "",
    namespace: path.namespace ?? ownNamespace ?? "",
    name,
    path: rawPath,
  };
}

/** ?watch as handlers/resource.ts reads it (what decides whether a watch is served): present and neither 0 nor false. */
function watchRequested(query: URLSearchParams): boolean {
  return queryBool(query, "watch") === true;
}

/** The name `fieldSelector=metadata.name=X` pins, when X could be a path segment; "" otherwise (a bad selector is the handler's 400). */
function pinnedObject(query: URLSearchParams): string {
  const selector = query.get("fieldSelector");
  if (selector === null || selector === "") return "";
  let name: string | undefined;
  try {
    name = pinnedName(parseFieldSelector(selector));
  } catch {
    return "";
  }
  if (name === undefined || name === "." || name === ".." || name.includes("/") || name.includes("%")) return "";
  return name;
}
