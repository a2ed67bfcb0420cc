// Test helper: the SHA-256 fingerprint of the certificate a TLS server
// actually presents on 127.0.0.1:port (not verified: self-signed pairs).

import { connect } from "node:tls";

export function presentedFingerprint(port: number, host = "127.0.0.1"): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ALPNProtocols: ["h2", "http/1.1"] }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once("error", reject);
  });
}
