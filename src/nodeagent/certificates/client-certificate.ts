// The node agent's client certificate (upstream's kubelet TLS bootstrap and
// certificate manager). With a bootstrap token the agent makes a key and a
// CertificateSigningRequest for CN system:node:<name>, O system:nodes, to the
// node agent client signer; waits for the controller manager to approve and
// sign it; keeps certificate and key in one PEM file
// (<dir>/<agent>-client-current.pem, 0600) and from then on talks with it. A
// restart with a certificate still valid needs no token. The rotator asks
// for a new certificate, with the current one, at 80 % of its life (the
// approver approves a node's renewal of its own name), writes it, and moves
// the agent's connections to it.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { RestClient, type ClientConfig } from "../../client/index.js";
import { makeCertificateRequest } from "../../component/pki.js";
import { CONDITION, NODE_USER_PREFIX, NODES_GROUP, signerNames, type CertificateSigningRequest } from "../../api/certificates/index.js";
import type { GroupVersionResource } from "../../api/resource-refs.js";
import type { Naming } from "../../machinery/naming.js";
import { sleep } from "../../machinery/until.js";

/** Upstream's rotation point is jittered in [70 %, 90 %] of the certificate's life; orch takes the middle. */
export const ROTATION_FRACTION = 0.8;

export interface NodeCertificate {
  readonly cert: string;
  readonly key: string;
  readonly notBefore: number;
  readonly notAfter: number;
}

/** The file holding the current certificate and key (upstream's kubelet-client-current.pem). */
export function clientCertificateFile(dir: string, naming: Naming): string {
  return join(dir, `${naming.agentName}-client-current.pem`);
}

function csrResource(naming: Naming): GroupVersionResource {
  return { group: naming.certificatesGroup, version: "v1", resource: "certificatesigningrequests", namespaced: false };
}

/** The certificate in `pem` (CERTIFICATE then PRIVATE KEY blocks), or undefined when absent, unreadable or not for `nodeName`. */
export function parseNodeCertificate(pem: string, nodeName: string): NodeCertificate | undefined {
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/.exec(pem)?.[0];
  const key = /-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[\s\S]*?-----END (?:EC |RSA )?PRIVATE KEY-----\n?/.exec(pem)?.[0];
  if (cert === undefined || key === undefined) return undefined;
  try {
    const x = new X509Certificate(cert);
    if (!x.subject.split("\n").includes(`CN=${NODE_USER_PREFIX}${nodeName}`)) return undefined;
    return { cert, key, notBefore: Date.parse(x.validFrom), notAfter: Date.parse(x.validTo) };
  } catch {
    return undefined;
  }
}

/** The stored certificate when it is still valid at `now`. */
export function loadNodeCertificate(file: string, nodeName: string, now = Date.now()): NodeCertificate | undefined {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const found = parseNodeCertificate(pem, nodeName);
  return found !== undefined && found.notAfter > now ? found : undefined;
}

/** Writes certificate and key atomically (a reader never sees half a file), mode 0600. */
export function storeNodeCertificate(file: string, cert: string, key: string): void {
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, cert.trimEnd() + "\n" + key, { mode: 0o600 });
  renameSync(tmp, file);
}

export interface RequestOptions {
  naming: Naming;
  nodeName: string;
  signal?: AbortSignal;
  /** How long to wait for approval and signing (default 10 minutes). */
  timeoutMs?: number;
  /** spec.expirationSeconds (none: the signer's --cluster-signing-duration). */
  expirationSeconds?: number;
  log?: (line: string) => void;
}

/**
 * Asks for a node client certificate through `client` (a bootstrap token, or
 * the current certificate when renewing) and waits for it; throws when the
 * request is denied, fails, or nothing happens within the timeout.
 */
export async function requestNodeCertificate(client: RestClient, options: RequestOptions): Promise<NodeCertificate> {
  const { naming, nodeName } = options;
  const ref = csrResource(naming);
  const { csr, key } = await makeCertificateRequest(`${NODE_USER_PREFIX}${nodeName}`, [NODES_GROUP]);
  const created = await client.create<CertificateSigningRequest>(ref, {
    apiVersion: `${naming.certificatesGroup}/v1`,
    kind: "CertificateSigningRequest",
    metadata: { generateName: "node-csr-" },
    spec: {
      request: Buffer.from(csr).toString("base64"),
      signerName: signerNames(naming).agentClient,
      // An ECDSA key: no key encipherment (upstream's kubelet asks the same).
      usages: ["digital signature", "client auth"],
      ...(options.expirationSeconds !== undefined ? { expirationSeconds: options.expirationSeconds } : {}),
    },
  });
  const name = created.metadata.name!;
  options.log?.(`${naming.agentName}: asked for a client certificate for ${NODE_USER_PREFIX}${nodeName} (certificatesigningrequest ${name}); waiting for approval and signing`);
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  for (;;) {
    const current = await client.get<CertificateSigningRequest>(ref, { name });
    const failed = (current.status?.conditions ?? []).find((c) => (c.type === CONDITION.denied || c.type === CONDITION.failed) && c.status === "True");
    if (failed !== undefined) throw new Error(`certificatesigningrequest ${name} was ${failed.type === CONDITION.denied ? "denied" : "not signed"}: ${failed.reason ?? ""} ${failed.message ?? ""}`.trimEnd());
    if (current.status?.certificate) {
      const cert = Buffer.from(current.status.certificate, "base64").toString("utf8");
      const parsed = parseNodeCertificate(cert + key, nodeName);
      if (parsed === undefined) throw new Error(`certificatesigningrequest ${name}: the issued certificate is not for ${NODE_USER_PREFIX}${nodeName}`);
      return parsed;
    }
    if (Date.now() > deadline) throw new Error(`certificatesigningrequest ${name} was not approved and signed within ${Math.round((options.timeoutMs ?? 600_000) / 1000)} s (is the controller manager running?)`);
    await sleep(500, options.signal);
    if (options.signal?.aborted) throw new Error("stopped while waiting for the node's certificate");
  }
}

export interface NodeCredentialsOptions extends RequestOptions {
  /** Where the API server is and its CA; `token` is the bootstrap token (used only when no valid certificate is stored). */
  cluster: ClientConfig;
  /** The agent's pki folder. */
  dir: string;
}

/** A client config with the node's certificate: the stored one while valid, else a new one got with the bootstrap token. */
export async function nodeClientConfig(options: NodeCredentialsOptions): Promise<{ config: ClientConfig; certificate: NodeCertificate }> {
  const { cluster } = options;
  const file = clientCertificateFile(options.dir, options.naming);
  let certificate = loadNodeCertificate(file, options.nodeName);
  if (certificate === undefined) {
    if (!cluster.token) throw new Error(`no valid client certificate in ${file} and no bootstrap token to ask for one`);
    const bootstrap = new RestClient(cluster, { userAgent: `orch-${options.naming.agentName}/bootstrap` });
    try {
      certificate = await requestNodeCertificate(bootstrap, options);
    } finally {
      bootstrap.close();
    }
    storeNodeCertificate(file, certificate.cert, certificate.key);
    options.log?.(`${options.naming.agentName}: client certificate for ${NODE_USER_PREFIX}${options.nodeName} stored in ${file} (valid until ${new Date(certificate.notAfter).toISOString()})`);
  }
  const { token: _token, ...rest } = cluster;
  return { config: { ...rest, cert: certificate.cert, key: certificate.key }, certificate };
}

export interface RotationOptions extends RequestOptions {
  /** The config the agent's clients share: its cert and key are replaced in place on rotation. */
  config: ClientConfig;
  certificate: NodeCertificate;
  dir: string;
  /** Called after each rotation (the agent's clients reconnect with the new certificate). */
  onRotated: (certificate: NodeCertificate) => void;
  /** The clock (tests); default Date.now. */
  now?: () => number;
}

/** When a certificate should be renewed: at ROTATION_FRACTION of its life. */
export function rotationTime(certificate: NodeCertificate): number {
  return certificate.notBefore + ROTATION_FRACTION * (certificate.notAfter - certificate.notBefore);
}

/** Renews the certificate at 80 % of its life, again and again, until the signal fires; failures are retried every 10 s. */
export async function rotateNodeCertificate(options: RotationOptions): Promise<void> {
  const now = options.now ?? Date.now;
  let current = options.certificate;
  const file = clientCertificateFile(options.dir, options.naming);
  while (!options.signal?.aborted) {
    // setTimeout takes at most 2^31-1 ms (about 24 days): a year-long certificate is waited for in steps.
    for (let left = rotationTime(current) - now(); left > 0 && !options.signal?.aborted; left = rotationTime(current) - now()) {
      await sleep(Math.min(left, 2 ** 30), options.signal);
    }
    if (options.signal?.aborted) return;
    const client = new RestClient({ ...options.config, cert: current.cert, key: current.key }, { userAgent: `orch-${options.naming.agentName}/certificate-rotation` });
    try {
      const next = await requestNodeCertificate(client, { ...options, timeoutMs: Math.max(30_000, current.notAfter - now()) });
      storeNodeCertificate(file, next.cert, next.key);
      Object.assign(options.config, { cert: next.cert, key: next.key });
      current = next;
      options.log?.(`${options.naming.agentName}: rotated the client certificate (valid until ${new Date(next.notAfter).toISOString()})`);
      options.onRotated(next);
    } catch (err) {
      options.log?.(`${options.naming.agentName}: certificate rotation failed: ${(err as Error).message} (retrying in 10 s)`);
      await sleep(10_000, options.signal);
    } finally {
      client.close();
    }
  }
}
