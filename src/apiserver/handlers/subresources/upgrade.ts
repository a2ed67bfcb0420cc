// HTTP/1.1 Upgrade requests (kubectl exec and attach: WebSocket, or its SPDY
// fallback) go to the connect subresource the path names, found through its
// declaration; any other upgrade is a 400, as upstream.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { findSubresource } from "../../../api/resource.js";
import { badRequest } from "../../../machinery/index.js";
import type { AdmissionUser } from "../../../api/admission.js";
import type { RegistryStore } from "../../registry/store.js";
import type { ParsedPath } from "../../routing.js";
import type { HandlerDeps } from "../request.js";
import { subresourceVerb, UPGRADE_HANDLERS } from "./index.js";
import { proxyUpgrade } from "./proxy.js";
import { handlePodLogWebSocket } from "../pod-log-websocket.js";

export interface UpgradeOptions extends HandlerDeps {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  path: ParsedPath;
  query: URLSearchParams;
  /** The store of the resource the path names, if it is served. */
  store: RegistryStore | undefined;
  /** The authenticated user (after impersonation), handed to admission. */
  user?: AdmissionUser;
}

/** Serves the upgrade, or throws an ApiError (before anything is proxied) for the caller to answer on the socket. */
export async function handleUpgrade(o: UpgradeOptions): Promise<void> {
  const { path, store } = o;
  const found = path.kind === "resource" && path.name !== undefined && path.subresource !== undefined && store !== undefined ? findSubresource(store.def, path.subresource) : undefined;
  // pods/log is a GET, also served as a WebSocket stream (./../pod-log-websocket.ts).
  const serve = found?.proxy ? proxyUpgrade : found?.connect ? UPGRADE_HANDLERS[found.name] : found?.name === "log" ? handlePodLogWebSocket : undefined;
  if (path.kind !== "resource" || store === undefined || found === undefined || serve === undefined || (path.subpath !== undefined && !found.proxy)) {
    throw badRequest(`${o.req.headers.upgrade ?? "upgrade"} requests are served only by connect sub-resources (pods/exec, pods/attach, proxy)`);
  }
  if (!found.proxy) subresourceVerb(store.def, found, o.req.method ?? "GET");
  await serve({ ...o, path, store, name: path.name!, subresource: found });
}
