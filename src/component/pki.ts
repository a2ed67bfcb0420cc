// First-start credentials: a CA, a serving certificate for localhost,
// 127.0.0.1 and the host name, and an admin bearer token, kept in the data
// folder so a restart with the same folder keeps everything. Keys are ECDSA
// P-256 (fast to make with WebCrypto; Go's TLS stack, and so kubectl, takes them).

import { webcrypto, X509Certificate as NodeX509 } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
// @peculiar/x509 resolves its ASN.1 schemas through tsyringe, which needs the Reflect metadata polyfill.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface Credentials {
  caCertPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  adminToken: string;
  /** The client certificate the API server shows node agents (pods/log), upstream's apiserver-kubelet-client. */
  nodeAgentClient: { cert: string; key: string };
}

export const PKI_FILES = {
  caCert: "ca.crt",
  caKey: "ca.key",
  serverCert: "apiserver.crt",
  serverKey: "apiserver.key",
  adminToken: "admin.token",
  nodeAgentClientCert: "apiserver-nodeagent-client.crt",
  nodeAgentClientKey: "apiserver-nodeagent-client.key",
} as const;

/** The subject of the API server's client certificate towards node agents (in the masters group, as upstream's kubeadm makes it); the user is the naming table's (machinery/naming.ts nodeAgentClientUser), this one the orch.io profile's. */
export const NODE_AGENT_CLIENT = { user: "orch-apiserver-nodeagent-client", groups: ["system:masters"] } as const;

/** The names the serving certificate covers: loopback, the host name, and any extra names asked for. */
export function servingNames(extra: string[] = []): { dns: string[]; ips: string[] } {
  const dns = new Set(["localhost", hostname()]);
  const ips = new Set(["127.0.0.1", "::1"]);
  for (const name of extra) (/^[\d.]+$|:/.test(name) ? ips : dns).add(name);
  return { dns: [...dns], ips: [...ips] };
}

/** Load the credentials under `dir`, creating whatever is missing (and a new serving cert when names changed or it expires soon). */
export async function ensureCredentials(dir: string, extraNames: string[] = [], nodeAgentClientUser: string = NODE_AGENT_CLIENT.user): Promise<Credentials> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The folder holds keys and the admin token: 0700 whatever existed before (issue 18, point 6).
  restrictMode(dir, 0o700);
  const path = (name: string) => join(dir, name);

  const ca = await loadOrMakeCa(path(PKI_FILES.caCert), path(PKI_FILES.caKey));

  const names = servingNames(extraNames);
  let server: { cert: string; key: string } | undefined;
  if (existsSync(path(PKI_FILES.serverCert)) && existsSync(path(PKI_FILES.serverKey))) {
    const cert = readFileSync(path(PKI_FILES.serverCert), "utf8");
    if (stillServes(cert, ca.cert, names)) server = { cert, key: readFileSync(path(PKI_FILES.serverKey), "utf8") };
  }
  if (server === undefined) {
    server = await makeServingCert(ca, names);
    writeSecret(path(PKI_FILES.serverKey), server.key);
    writeFileSync(path(PKI_FILES.serverCert), server.cert, { mode: 0o644 });
  }

  let adminToken: string;
  if (existsSync(path(PKI_FILES.adminToken))) {
    adminToken = readFileSync(path(PKI_FILES.adminToken), "utf8").trim();
    // An empty token would match no client and lock everyone out silently: say so and stop.
    if (adminToken === "") throw new Error(`${path(PKI_FILES.adminToken)} is empty: no client could authenticate as admin; remove the file to have a new token made, or write a token into it`);
  } else {
    adminToken = Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    writeSecret(path(PKI_FILES.adminToken), adminToken + "\n");
  }
  let nodeAgentClient: { cert: string; key: string } | undefined;
  if (existsSync(path(PKI_FILES.nodeAgentClientCert)) && existsSync(path(PKI_FILES.nodeAgentClientKey))) {
    const cert = readFileSync(path(PKI_FILES.nodeAgentClientCert), "utf8");
    // Kept while valid and for the user the naming table names (a data folder started under the other profile gets a new one).
    if (stillValid(cert, ca.cert) && commonName(cert) === nodeAgentClientUser) nodeAgentClient = { cert, key: readFileSync(path(PKI_FILES.nodeAgentClientKey), "utf8") };
  }
  if (nodeAgentClient === undefined) {
    nodeAgentClient = await issueClientCert(ca, nodeAgentClientUser, [...NODE_AGENT_CLIENT.groups]);
    writeSecret(path(PKI_FILES.nodeAgentClientKey), nodeAgentClient.key);
    writeFileSync(path(PKI_FILES.nodeAgentClientCert), nodeAgentClient.cert, { mode: 0o644 });
  }
  for (const secret of [PKI_FILES.caKey, PKI_FILES.serverKey, PKI_FILES.adminToken, PKI_FILES.nodeAgentClientKey]) restrictMode(path(secret), 0o600);
  return { caCertPem: ca.cert, serverCertPem: server.cert, serverKeyPem: server.key, adminToken, nodeAgentClient };
}

/** The front proxy's files in the data folder (upstream kubeadm's front-proxy-ca and front-proxy-client). */
export const FRONT_PROXY_FILES = {
  caCert: "front-proxy-ca.crt",
  caKey: "front-proxy-ca.key",
  clientCert: "front-proxy-client.crt",
  clientKey: "front-proxy-client.key",
} as const;

/** The common name of the front proxy's client certificate (kubeadm's), what extension servers allow by default. */
export const FRONT_PROXY_CLIENT_NAME = "front-proxy-client";

/**
 * The aggregation layer's client credentials: the certificate the API server
 * shows extension API servers when it proxies to them, from a CA of its own
 * (extension servers trust it as their requestheader client CA). Kept in the
 * data folder, made when missing or expiring; the CA signs nothing else.
 */
export async function ensureFrontProxyCredentials(dir: string): Promise<{ caFile: string; caCertPem: string; cert: string; key: string }> {
  const path = (name: string) => join(dir, name);
  const ca = await loadOrMakeCa(path(FRONT_PROXY_FILES.caCert), path(FRONT_PROXY_FILES.caKey));
  let client: { cert: string; key: string } | undefined;
  if (existsSync(path(FRONT_PROXY_FILES.clientCert)) && existsSync(path(FRONT_PROXY_FILES.clientKey))) {
    const cert = readFileSync(path(FRONT_PROXY_FILES.clientCert), "utf8");
    if (stillValid(cert, ca.cert)) client = { cert, key: readFileSync(path(FRONT_PROXY_FILES.clientKey), "utf8") };
  }
  if (client === undefined) {
    client = await issueClientCert(ca, FRONT_PROXY_CLIENT_NAME);
    writeSecret(path(FRONT_PROXY_FILES.clientKey), client.key);
    writeFileSync(path(FRONT_PROXY_FILES.clientCert), client.cert, { mode: 0o644 });
  }
  for (const secret of [FRONT_PROXY_FILES.caKey, FRONT_PROXY_FILES.clientKey]) restrictMode(path(secret), 0o600);
  return { caFile: path(FRONT_PROXY_FILES.caCert), caCertPem: ca.cert, ...client };
}

/**
 * A serving certificate for a component started without --tls-cert-file (upstream's
 * self-signed serving cert: a throwaway CA and a certificate it signs, chain in `cert`).
 */
export async function selfSignedServingCert(extraNames: string[] = []): Promise<{ cert: string; key: string; ca: string }> {
  const ca = await makeCa();
  const server = await makeServingCert(ca, servingNames(extraNames));
  return { cert: server.cert + ca.cert, key: server.key, ca: ca.cert };
}

/** A client certificate (CN = user, O = groups) signed by the CA: how scrapers and components authenticate with certificates. */
export async function issueClientCert(ca: { cert: string; key: string }, user: string, groups: string[] = []): Promise<{ cert: string; key: string }> {
  return signLeaf(ca, {
    subject: [`CN=${user}`, ...groups.map((g) => `O=${g}`)].join(", "),
    keyUsages: x509.KeyUsageFlags.digitalSignature,
    usage: x509.ExtendedKeyUsage.clientAuth,
    extensions: [],
  });
}

/** chmod `path` to `mode` unless it already has it; a warning on stderr when that is not allowed (another owner, a read-only mount). */
export function restrictMode(path: string, mode: number, warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): void {
  try {
    if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
  } catch (err) {
    warn(`warning: cannot make ${path} mode ${mode.toString(8)}: ${(err as Error).message}`);
  }
}

/** The CA kept in `certFile` and `keyFile`, made (and written) when either is missing. */
async function loadOrMakeCa(certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  if (existsSync(certFile) && existsSync(keyFile)) return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
  const ca = await makeCa();
  writeSecret(keyFile, ca.key);
  writeFileSync(certFile, ca.cert, { mode: 0o644 });
  return ca;
}

function writeSecret(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
}

async function exportKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString("base64").replace(/(.{64})/g, "$1\n").trimEnd()}\n-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64");
  return webcrypto.subtle.importKey("pkcs8", der, ALG, false, ["sign"]);
}

function serial(): string {
  // Positive 16-byte serial: clear the top bit.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0]! &= 0x7f;
  return Buffer.from(bytes).toString("hex");
}

async function makeCa(): Promise<{ cert: string; key: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=orch-ca-${Math.floor(now / 1000)}`,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 3650 * DAY_MS),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString("pem") + "\n", key: await exportKey(keys.privateKey) };
}

async function makeServingCert(
  ca: { cert: string; key: string },
  names: { dns: string[]; ips: string[] },
): Promise<{ cert: string; key: string }> {
  return signLeaf(ca, {
    subject: "CN=orch-apiserver",
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    usage: x509.ExtendedKeyUsage.serverAuth,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        ...names.dns.map((value) => ({ type: "dns" as const, value })),
        ...names.ips.map((value) => ({ type: "ip" as const, value })),
      ]),
    ],
  });
}

/** A one-year leaf certificate with a fresh key, signed by the CA. */
async function signLeaf(
  ca: { cert: string; key: string },
  options: { subject: string; keyUsages: number; usage: string; extensions: x509.Extension[] },
): Promise<{ cert: string; key: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const caCert = new x509.X509Certificate(ca.cert);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: options.subject,
    issuer: caCert.subject,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 365 * DAY_MS),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: await importKey(ca.key),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(options.keyUsages, true),
      new x509.ExtendedKeyUsageExtension([options.usage]),
      ...options.extensions,
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: cert.toString("pem") + "\n", key: await exportKey(keys.privateKey) };
}

/** A certificate is kept while it is signed by our CA and has more than 30 days left. */
function commonName(certPem: string): string | undefined {
  try {
    return /^CN=(.*)$/m.exec(new NodeX509(certPem).subject)?.[1];
  } catch {
    return undefined;
  }
}

function stillValid(certPem: string, caPem: string): boolean {
  try {
    const cert = new NodeX509(certPem);
    return cert.verify(new NodeX509(caPem).publicKey) && new Date(cert.validTo).getTime() - Date.now() >= 30 * DAY_MS;
  } catch {
    return false;
  }
}

/** A serving cert is kept while it is still valid and covers every name. */
function stillServes(certPem: string, caPem: string, names: { dns: string[]; ips: string[] }): boolean {
  if (!stillValid(certPem, caPem)) return false;
  try {
    const cert = new NodeX509(certPem);
    return names.dns.every((n) => cert.checkHost(n) !== undefined) && names.ips.every((ip) => cert.checkIP(ip) !== undefined);
  } catch {
    return false;
  }
}

/** A fresh ECDSA key and a PKCS#10 request for CN = user, O = groups (a node agent's client certificate request). */
export async function makeCertificateRequest(user: string, groups: readonly string[] = []): Promise<{ csr: string; key: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [`CN=${user}`, ...groups.map((g) => `O=${g}`)].join(", "),
    keys,
    signingAlgorithm: ALG,
  });
  return { csr: csr.toString("pem") + "\n", key: await exportKey(keys.privateKey) };
}

/** What a signer puts in a certificate for a request it approved. */
export interface CertificateTemplate {
  /** SubjectPublicKeyInfo DER of the request's key. */
  publicKeyDer: Uint8Array;
  commonName: string;
  organizations: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  /** Upstream's key usage names ("digital signature", "key encipherment", "client auth", "server auth", ...). */
  usages: readonly string[];
  notBefore: Date;
  notAfter: Date;
}

const KEY_USAGE_FLAGS: Readonly<Record<string, number>> = {
  "signing": x509.KeyUsageFlags.digitalSignature,
  "digital signature": x509.KeyUsageFlags.digitalSignature,
  "content commitment": x509.KeyUsageFlags.nonRepudiation,
  "key encipherment": x509.KeyUsageFlags.keyEncipherment,
  "key agreement": x509.KeyUsageFlags.keyAgreement,
  "data encipherment": x509.KeyUsageFlags.dataEncipherment,
  "cert sign": x509.KeyUsageFlags.keyCertSign,
  "crl sign": x509.KeyUsageFlags.cRLSign,
  "encipher only": x509.KeyUsageFlags.encipherOnly,
  "decipher only": x509.KeyUsageFlags.decipherOnly,
};
const EXTENDED_USAGES: Readonly<Record<string, string>> = {
  "server auth": x509.ExtendedKeyUsage.serverAuth,
  "client auth": x509.ExtendedKeyUsage.clientAuth,
  "code signing": x509.ExtendedKeyUsage.codeSigning,
  "email protection": x509.ExtendedKeyUsage.emailProtection,
  "timestamping": x509.ExtendedKeyUsage.timeStamping,
  "ocsp signing": x509.ExtendedKeyUsage.ocspSigning,
};

/** A leaf certificate for `template`, signed by the cluster CA (upstream's local signer); PEM. */
export async function signCertificate(ca: { cert: string; key: string }, template: CertificateTemplate): Promise<string> {
  const caCert = new x509.X509Certificate(ca.cert);
  const publicKey = new x509.PublicKey(template.publicKeyDer);
  const keyUsages = template.usages.reduce((flags, u) => flags | (KEY_USAGE_FLAGS[u] ?? 0), 0);
  const extended = template.usages.flatMap((u) => (EXTENDED_USAGES[u] !== undefined ? [EXTENDED_USAGES[u]] : []));
  const names = [...(template.dnsNames ?? []).map((value) => ({ type: "dns" as const, value })), ...(template.ipAddresses ?? []).map((value) => ({ type: "ip" as const, value }))];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [`CN=${template.commonName}`, ...template.organizations.map((o) => `O=${o}`)].join(", "),
    issuer: caCert.subject,
    notBefore: template.notBefore,
    notAfter: template.notAfter,
    signingAlgorithm: ALG,
    publicKey: await publicKey.export(),
    signingKey: await importKey(ca.key),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      ...(keyUsages !== 0 ? [new x509.KeyUsagesExtension(keyUsages, true)] : []),
      ...(extended.length > 0 ? [new x509.ExtendedKeyUsageExtension(extended)] : []),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return cert.toString("pem") + "\n";
}
