// Client certificates (upstream's x509 authenticator): a certificate the
// TLS handshake verified against the cluster CA proves its subject, user =
// the CN, groups = the O values. The listener asks every client for one but
// lets a handshake without one (or with one the CA did not sign, or expired)
// go on: such a request is judged by its other credentials, or is a 401.
//
// The user is worked out once per connection: the certificate cannot change
// on a connection (the listener refuses TLS renegotiation, as Go's server
// does), and reading it (`getPeerCertificate`, which builds the whole
// certificate as JS objects) cost ~8 % of a GET (docs/benchmarks.md, RBAC).

import type { TLSSocket } from "node:tls";
import type { Incoming } from "../http/respond.js";
import type { Authenticator } from "./authentication.js";
import type { UserInfo } from "./context.js";

/** Per connection (the HTTP/1.1 socket, or the HTTP/2 session): its certificate's user, or null for none. */
const users = new WeakMap<object, UserInfo | null>();

export const clientCertificateAuthenticator: Authenticator = {
  authenticate(req: Incoming): UserInfo | undefined {
    const socket = req.socket as TLSSocket | undefined;
    if (socket === undefined) return undefined;
    // An HTTP/2 request's `socket` is a proxy made per stream; its session is the connection.
    const connection: object = (req as { stream?: { session?: object } }).stream?.session ?? socket;
    let user = users.get(connection);
    if (user === undefined) users.set(connection, (user = certificateUser(socket)));
    return user ?? undefined;
  },
};

function certificateUser(socket: TLSSocket): UserInfo | null {
  // `authorized` is true only when a certificate was sent and verified against the CA (chain, dates, client usage).
  if (socket.authorized !== true || typeof socket.getPeerCertificate !== "function") return null;
  const subject = socket.getPeerCertificate().subject as Record<string, string | string[] | undefined> | undefined;
  const cn = values(subject?.CN)[0];
  if (cn === undefined || cn === "") return null;
  return Object.freeze({ name: cn, groups: Object.freeze([...values(subject?.O), "system:authenticated"]) });
}

/** Node gives a repeated subject attribute as an array, a single one as a string. */
function values(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
