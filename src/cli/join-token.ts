// Join tokens: `orch server --join URL --token T` with nothing else. A join
// token carries the cluster CA's SHA-256 beside the bearer token
// (`orch1.<64 hex digits>.<token>`, the idea of kubeadm's
// --discovery-token-ca-cert-hash in one string). The joining side fetches the
// server's certificate chain without trusting it, keeps the certificate whose
// digest is the pinned one as its CA, and only then sends the token, so a
// server that is not the cluster's never sees it.

import { createHash, X509Certificate } from "node:crypto";
import { connect, type PeerCertificate } from "node:tls";

const PREFIX = "orch1";
/** The join token's file in the server's data folder (mode 0600, rewritten at every start). */
export const JOIN_TOKEN_FILE = "join.token";

export interface JoinToken {
  /** SHA-256 of the CA certificate's DER bytes, lower-case hex. */
  caSha256: string;
  /** The bearer token to use once the CA is trusted. */
  token: string;
}

/** SHA-256 of a PEM certificate's DER bytes, lower-case hex. */
export function certificateSha256(pem: string): string {
  return createHash("sha256").update(new X509Certificate(pem).raw).digest("hex");
}

export function formatJoinToken(caPem: string, token: string): string {
  return `${PREFIX}.${certificateSha256(caPem)}.${token}`;
}

/** The parts of a join token; undefined for a plain bearer token. */
export function parseJoinToken(text: string): JoinToken | undefined {
  const m = /^orch1\.([0-9a-f]{64})\.(.+)$/.exec(text.trim());
  return m === null ? undefined : { caSha256: m[1]!, token: m[2]! };
}

/**
 * The CA certificate (PEM) in the chain `url` presents whose SHA-256 is
 * `caSha256`; rejects, naming what was found, when there is none. Nothing is
 * sent over this connection but the TLS handshake.
 */
export async function fetchPinnedCa(url: string, caSha256: string, timeoutMs = 10_000): Promise<string> {
  const { hostname, port } = new URL(url);
  const chain = await new Promise<PeerCertificate[]>((resolve, reject) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ""), port: Number(port || 443), rejectUnauthorized: false, servername: /^[\d.:[\]]+$/.test(hostname) ? undefined : hostname });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no TLS handshake from ${url} within ${timeoutMs} ms`)));
    socket.once("error", reject);
    socket.once("secureConnect", () => {
      const certs: PeerCertificate[] = [];
      for (let c: PeerCertificate | undefined = socket.getPeerCertificate(true); c !== undefined && c.raw !== undefined; ) {
        certs.push(c);
        const next: PeerCertificate | undefined = (c as { issuerCertificate?: PeerCertificate }).issuerCertificate;
        c = next === c ? undefined : next; // a self-signed root is its own issuer
      }
      socket.end();
      resolve(certs);
    });
  });
  for (const cert of chain) {
    if (createHash("sha256").update(cert.raw).digest("hex") === caSha256) {
      return new X509Certificate(cert.raw).toString();
    }
  }
  throw new Error(`${url} presented no certificate with the join token's CA digest ${caSha256.slice(0, 16)}…: not the cluster the token belongs to`);
}
