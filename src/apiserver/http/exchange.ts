// The request and response the API server serves, over HTTP/1.1 and HTTP/2 alike. A module of
// their own so that respond.ts and the response-body.ts it writes through share them without
// importing each other; respond.ts re-exports them for its callers.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

export type Incoming = IncomingMessage | Http2ServerRequest;
export type Outgoing = ServerResponse | Http2ServerResponse;
