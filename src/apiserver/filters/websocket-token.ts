// Bearer tokens carried in a WebSocket subprotocol, for browsers: a page's
// WebSocket cannot set an Authorization header, so (as upstream's websocket
// protocol authenticator) the token rides in Sec-WebSocket-Protocol as
// `base64url.bearer.authorization.k8s.io.<base64url(token), no padding>`
// beside the real subprotocol (`v5.channel.k8s.io`). Only WebSocket upgrades
// are looked at; the token is then checked by the bearer-token authenticators
// as if it had come in an Authorization header. The exec proxy drops the
// token's protocol before the node agent sees the handshake
// (withoutBearerProtocol).

import type { Incoming } from "../http/respond.js";
import type { Authenticator } from "./authentication.js";

export const BEARER_PROTOCOL_PREFIX = "base64url.bearer.authorization.k8s.io.";

/** The token of the request's bearer subprotocol; undefined when there is none or it is malformed (upstream: an error, a 401 either way). */
export function bearerProtocolToken(req: Pick<Incoming, "headers">): string | undefined {
  const upgrade = req.headers.upgrade;
  if (typeof upgrade !== "string" || upgrade.toLowerCase() !== "websocket") return undefined;
  const protocols = protocolList(req.headers["sec-websocket-protocol"]);
  const bearer = protocols.filter((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  // One token, and at least one other protocol for the server to answer with.
  if (bearer.length !== 1 || bearer.length === protocols.length) return undefined;
  const encoded = bearer[0]!.slice(BEARER_PROTOCOL_PREFIX.length);
  if (encoded === "" || !/^[A-Za-z0-9_-]+$/.test(encoded) || encoded.length % 4 === 1) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(encoded, "base64url"));
  } catch {
    return undefined;
  }
}

/** The Sec-WebSocket-Protocol values without the bearer token's (what the node agent may see). */
export function withoutBearerProtocol(value: string): string {
  return protocolList(value).filter((p) => !p.startsWith(BEARER_PROTOCOL_PREFIX)).join(", ");
}

function protocolList(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return values.flatMap((v) => v.split(",")).map((p) => p.trim()).filter((p) => p !== "");
}

/** Asks the bearer-token authenticators about the token of a WebSocket's bearer subprotocol. */
export function websocketTokenAuthenticator(tokenAuthenticators: readonly Authenticator[]): Authenticator {
  return {
    async authenticate(req) {
      const token = bearerProtocolToken(req);
      if (token === undefined) return undefined;
      const asHeader = { headers: { authorization: `Bearer ${token}` } } as Incoming;
      for (const a of tokenAuthenticators) {
        const user = await a.authenticate(asHeader);
        if (user !== undefined) return user;
      }
      return undefined;
    },
  };
}
