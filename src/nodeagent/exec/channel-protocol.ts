// The channel.k8s.io WebSocket protocol of exec and attach streams, as
// upstream's remotecommand speaks it: every binary message starts with a
// channel byte (0 stdin, 1 stdout, 2 stderr, 3 error/status, 4 resize); v5
// adds 255 (the sender closes one of its streams). Status JSON and the
// NonZeroExitCode shape are what kubectl parses into its exit code.

/** Offered subprotocols we answer, best first (upstream's StreamProtocolV5Name …). */
export const CHANNEL_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

export const enum Channel {
  Stdin = 0,
  Stdout = 1,
  Stderr = 2,
  Error = 3,
  Resize = 4,
  /** v5: the payload's one byte names the channel its sender closes. */
  Close = 255,
}

/** The protocol to speak for a client's offer; undefined when we speak none of them. */
export function pickProtocol(offered: Iterable<string>): ChannelProtocol | undefined {
  const set = new Set(offered);
  return CHANNEL_PROTOCOLS.find((p) => set.has(p));
}

/** One message on a channel. */
export function frame(channel: Channel, data: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof data === "string" ? Buffer.from(data) : data;
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = channel;
  body.copy(out, 1);
  return out;
}

/** How a command ended, as the status on channel 3 says it (v4 and later). */
export function exitStatus(exitCode: number): object {
  if (exitCode === 0) return { metadata: {}, status: "Success" };
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: command terminated with exit code ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  };
}

/** A failure other than the command's exit code (it could not start): upstream's InternalError. */
export function internalErrorStatus(message: string): object {
  return { metadata: {}, status: "Failure", message: `Internal error occurred: ${message}`, reason: "InternalError", details: { causes: [{ message }] }, code: 500 };
}

/** Terminal size from a resize message ({"Width":80,"Height":24}); undefined when it does not parse. */
export function parseResize(payload: Buffer): { width: number; height: number } | undefined {
  try {
    const v = JSON.parse(payload.toString("utf8")) as { Width?: unknown; Height?: unknown };
    const width = Number(v.Width);
    const height = Number(v.Height);
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 0 || height < 0 || width > 65535 || height > 65535) return undefined;
    return { width, height };
  } catch {
    return undefined;
  }
}

/** The end of a stream: the status on channel 3 (v4 and later; the older protocols only an error text), then the close. */
export function endStream(ws: { readonly readyState: number; readonly OPEN: number; send(data: Buffer): void; close(code: number): void }, protocol: string, status: object): void {
  if (ws.readyState !== ws.OPEN) return;
  const failed = (status as { status?: string }).status !== "Success";
  if (protocol === "v5.channel.k8s.io" || protocol === "v4.channel.k8s.io") ws.send(frame(Channel.Error, JSON.stringify(status)));
  else if (failed) ws.send(frame(Channel.Error, (status as { message?: string }).message ?? "error"));
  ws.close(1000);
}
