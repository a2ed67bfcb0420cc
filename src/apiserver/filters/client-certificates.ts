// Client certificates (upstream's x509 authenticator): a certificate the
// TLS handshake verified against the cluster CA proves its subject, user =
// the CN, groups = the O values. The listener asks every client for one but
// lets a handshake without one (or with one the CA did not sign, or expired)
// go on: such a request is judged by its other credentials, or is a 401.

import type { TLSSocket } from "node:tls";
import type { Incoming } from "../http/respond.js";
import type { Authenticator } from "./authentication.js";
import type { UserInfo } from "./context.js";

export const clientCertificateAuthenticator: Authenticator = {
  authenticate(req: Incoming): UserInfo | undefined {
    const socket = req.socket as TLSSocket | undefined;
    // `authorized` is true only when a certificate was sent and verified against the CA (chain, dates, client usage).
    if (socket?.authorized !== true || typeof socket.getPeerCertificate !== "function") return undefined;
    const subject = socket.getPeerCertificate().subject as Record<string, string | string[] | undefined> | undefined;
    const cn = values(subject?.CN)[0];
    if (cn === undefined || cn === "") return undefined;
    return { name: cn, groups: [...values(subject?.O), "system:authenticated"] };
  },
};

/** Node gives a repeated subject attribute as an array, a single one as a string. */
function values(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
