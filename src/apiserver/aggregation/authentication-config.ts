// The `extension-apiserver-authentication` ConfigMap in the system namespace
// (upstream's cluster authentication trust controller): what an extension API
// server needs to trust this server's requests. The client CA of user
// certificates, and the front proxy's: its CA, the names its client
// certificate may have, and the headers the caller's identity comes in.
// Written at every start; kept as it is otherwise.

import { FRONT_PROXY_CLIENT_NAME } from "../../component/pki.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { Stores } from "../storage-factory.js";

export const AUTHENTICATION_CONFIGMAP = "extension-apiserver-authentication";

export interface FrontProxyTrust {
  /** PEM of --requestheader-client-ca-file. */
  readonly requestheaderCaPem: string;
  /** --requestheader-allowed-names (empty: any name the CA signed). */
  readonly allowedNames: readonly string[];
}

export function defaultAllowedNames(): string[] {
  return [FRONT_PROXY_CLIENT_NAME];
}

export async function publishAuthenticationConfig(stores: Stores, naming: Naming, clientCaPem: string, trust: FrontProxyTrust): Promise<void> {
  const configmaps = stores.for({ group: "", resource: "configmaps" });
  if (configmaps === undefined) return;
  const data = {
    "client-ca-file": clientCaPem,
    "requestheader-client-ca-file": trust.requestheaderCaPem,
    "requestheader-allowed-names": JSON.stringify(trust.allowedNames),
    "requestheader-username-headers": JSON.stringify(["X-Remote-User"]),
    "requestheader-group-headers": JSON.stringify(["X-Remote-Group"]),
    "requestheader-extra-headers-prefix": JSON.stringify(["X-Remote-Extra-"]),
  };
  const obj: ApiObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: AUTHENTICATION_CONFIGMAP, namespace: naming.systemNamespace }, data } as ApiObject;
  try {
    await configmaps.create(naming.systemNamespace, obj);
  } catch (err) {
    if (!isApiError(err, "AlreadyExists")) throw err;
    await configmaps.modify(naming.systemNamespace, AUTHENTICATION_CONFIGMAP, (cur) => ({ ...cur, data }) as ApiObject);
  }
}
