// The front proxy's credentials (upstream's --proxy-client-cert-file,
// --proxy-client-key-file, --requestheader-client-ca-file,
// --requestheader-allowed-names): given as files, or made in the data folder
// at first start (front-proxy-ca.crt and front-proxy-client.crt, CN
// front-proxy-client). What extension servers need to trust them is
// published in the extension-apiserver-authentication ConfigMap.

import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { ensureFrontProxyCredentials } from "../../component/pki.js";
import type { Naming } from "../../machinery/naming.js";
import type { Stores } from "../storage-factory.js";
import { unlessStorageFull } from "../storage-full.js";
import { defaultAllowedNames, publishAuthenticationConfig } from "./authentication-config.js";

export interface AggregationOptions {
  /** --proxy-client-cert-file and --proxy-client-key-file (both or neither; neither: front-proxy-client.crt/.key in the data folder). */
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  /** --requestheader-client-ca-file (default: front-proxy-ca.crt in the data folder, which signs the default client certificate). */
  requestheaderClientCaFile?: string;
  /** --requestheader-allowed-names (default: front-proxy-client with the made certificate, any name with a given one). */
  requestheaderAllowedNames?: readonly string[];
  /** How often remote APIServices are checked besides on changes (default 30 s). */
  checkIntervalMs?: number;
}

export async function frontProxy(dataDir: string, o: AggregationOptions, clientCaPem: string, stores: Stores, naming: Naming, log: (line: string) => void): Promise<{ client: { cert: string; key: string } }> {
  const given = Boolean(o.proxyClientCertFile) || Boolean(o.proxyClientKeyFile);
  if (given && !(o.proxyClientCertFile && o.proxyClientKeyFile)) throw new Error("--proxy-client-cert-file and --proxy-client-key-file must be given together");
  const made = given ? undefined : await ensureFrontProxyCredentials(dataDir);
  const client = made ?? { cert: readFileSync(o.proxyClientCertFile!, "utf8"), key: readFileSync(o.proxyClientKeyFile!, "utf8") };
  if (made === undefined) {
    // A pair that is not one (unreadable PEM, a key of another certificate) stops the start, as upstream's.
    try {
      createSecureContext(client);
    } catch (err) {
      throw new Error(`--proxy-client-cert-file/--proxy-client-key-file: ${(err as Error).message}`);
    }
  }
  const caPem = o.requestheaderClientCaFile ? readFileSync(o.requestheaderClientCaFile, "utf8") : made?.caCertPem ?? "";
  const allowedNames = o.requestheaderAllowedNames ?? (made ? defaultAllowedNames() : []);
  await unlessStorageFull("the extension-apiserver-authentication config map", log, () => publishAuthenticationConfig(stores, naming, clientCaPem, { requestheaderCaPem: caPem, allowedNames }), undefined);
  return { client };
}
