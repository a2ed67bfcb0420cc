// Upstream's kubelet TLS bootstrap for a standalone `orch nodeagent`
// (`--bootstrap-kubeconfig`): when the --kubeconfig file is missing, or its
// client certificate is no longer valid, the agent asks for a node
// certificate with the bootstrap kubeconfig's credentials (a bootstrap
// token), keeps it in <cert-dir>/<agent>-client-current.pem and writes
// --kubeconfig naming that file as client-certificate and client-key (as
// upstream's kubelet does); from then on it talks with the certificate and
// renews it at 80 % of its life (client-certificate.ts).

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { RestClient, loadKubeconfig, namingOfServer, type ClientConfig } from "../../client/index.js";
import type { Naming } from "../../machinery/naming.js";
import { clientCertificateFile, nodeClientConfig, parseNodeCertificate, type NodeCertificate } from "./client-certificate.js";

export interface BootstrapOptions {
  /** --kubeconfig: read when present and valid; written after a bootstrap. */
  kubeconfig: string;
  /** --bootstrap-kubeconfig. */
  bootstrapKubeconfig: string;
  /** --cert-dir: where the certificate file goes. */
  certDir: string;
  nodeName: string;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export interface BootstrappedCredentials {
  /** The config the agent's client uses: its cert and key are replaced in place on rotation. */
  config: ClientConfig;
  certificate: NodeCertificate;
  naming: Naming;
}

/**
 * The node's credentials: --kubeconfig's when it exists with a certificate for
 * this node that is still valid, else a new certificate got through the
 * bootstrap kubeconfig (then --kubeconfig is written).
 */
export async function bootstrapNodeCredentials(o: BootstrapOptions): Promise<BootstrappedCredentials> {
  if (existsSync(o.kubeconfig)) {
    const current = loadKubeconfig(o.kubeconfig);
    const certificate = current.cert && current.key ? parseNodeCertificate(current.cert + current.key, o.nodeName) : undefined;
    if (certificate !== undefined && certificate.notAfter > Date.now()) {
      // One PEM file holds both (as a kubelet's): the config takes each block alone.
      const config: ClientConfig = { ...current, cert: certificate.cert, key: certificate.key };
      return { config, certificate, naming: await askNaming(config) };
    }
    o.log?.(`--kubeconfig ${o.kubeconfig} holds no valid client certificate for this node: bootstrapping with ${o.bootstrapKubeconfig}`);
  }
  const bootstrap = loadKubeconfig(o.bootstrapKubeconfig);
  const naming = await askNaming(bootstrap);
  const { config, certificate } = await nodeClientConfig({
    cluster: bootstrap, dir: o.certDir, nodeName: o.nodeName, naming,
    ...(o.signal !== undefined ? { signal: o.signal } : {}), ...(o.log !== undefined ? { log: o.log } : {}),
  });
  writeKubeconfig(o.kubeconfig, config, clientCertificateFile(o.certDir, naming));
  o.log?.(`wrote ${o.kubeconfig} (client certificate ${clientCertificateFile(o.certDir, naming)})`);
  return { config, certificate, naming };
}

async function askNaming(config: ClientConfig): Promise<Naming> {
  const probe = new RestClient(config);
  try {
    return await namingOfServer(probe);
  } finally {
    probe.close();
  }
}

/** Upstream's kubelet kubeconfig: the server and its CA inline, the certificate and key from the rotated file. */
function writeKubeconfig(path: string, config: ClientConfig, certFile: string): void {
  const lines = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: default-cluster",
    "  cluster:",
    `    server: ${JSON.stringify(config.server)}`,
    ...(config.ca !== undefined ? [`    certificate-authority-data: ${Buffer.from(config.ca).toString("base64")}`] : []),
    ...(config.insecureSkipTlsVerify ? ["    insecure-skip-tls-verify: true"] : []),
    ...(config.tlsServerName !== undefined ? [`    tls-server-name: ${JSON.stringify(config.tlsServerName)}`] : []),
    "contexts:",
    "- name: default-context",
    "  context: {cluster: default-cluster, namespace: default, user: default-auth}",
    "current-context: default-context",
    "users:",
    "- name: default-auth",
    "  user:",
    `    client-certificate: ${JSON.stringify(certFile)}`,
    `    client-key: ${JSON.stringify(certFile)}`,
    "",
  ];
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lines.join("\n"), { mode: 0o600 });
}
