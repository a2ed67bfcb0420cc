// The HTTP/2 receive windows of orch's clients (the REST client, the etcd
// client). HTTP/2's default window is 64 KiB per stream and 64 KiB for the
// whole connection: a peer may send no more until the client's WINDOW_UPDATE
// has reached it, so a watch's throughput is one window per round trip. When
// the server's event loop is busy a round trip is a whole turn of it (tens of
// milliseconds), and a pod watch at 300 events/s fell minutes behind
// (docs/benchmarks.md, session 28). Go's HTTP/2 client, which client-go uses,
// opens 4 MiB per stream and 1 GiB per connection; these are of that order.

import type { ClientHttp2Session, SecureClientSessionOptions } from "node:http2";

/** Bytes a peer may send on one stream before the client's WINDOW_UPDATE. */
export const STREAM_WINDOW = 4 * 1024 * 1024;
/** Bytes a peer may send on the whole connection before the client's WINDOW_UPDATE. */
export const SESSION_WINDOW = 64 * 1024 * 1024;

/**
 * Connect options that advertise the stream window from the first SETTINGS
 * frame. The session's memory cap (MB; node's default is 10) must hold what
 * the windows let in: above it node refuses new streams.
 */
export const windowOptions: Pick<SecureClientSessionOptions, "settings" | "maxSessionMemory"> = {
  settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
  maxSessionMemory: 256,
};

/** Widens a connected session's own window (the connection-level one has no SETTINGS entry). */
export function widenSessionWindow(session: ClientHttp2Session): void {
  try {
    session.setLocalWindowSize(SESSION_WINDOW);
  } catch {
    // a session already closing: nothing more will arrive on it
  }
}
