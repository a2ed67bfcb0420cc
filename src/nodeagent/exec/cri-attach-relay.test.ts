// The relay to a runtime's streaming server (./cri-attach-relay.ts) against a
// stand-in streaming server built from the agent's own SPDY server side
// (SpdyTransport, as containerd's server takes a remotecommand session): the
// upgrade and its refusals, stdin with its half-close, terminal sizes, stdout
// and stderr apart, the runtime's status passed back, and either side's end
// reaching the other. containerd itself: test/exec.containerd.test.ts and
// test/attach-interactive.e2e.test.ts.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Channel } from "./channel-protocol.js";
import { ChannelTransport, SpdyTransport, type TerminalSize } from "./channel-transport.js";
import { dialStreamingServer, relayAttach, runtimeStatus, StreamingServerError } from "./cri-attach-relay.js";
import { negotiateStreamProtocol } from "./spdy/upgrade.js";
import { SPDY_CHANNEL_PROTOCOLS, type StreamOptions } from "./stream-request.js";

/** The client's side as the agent holds it: records what the relay sends it. */
class FakeClient extends ChannelTransport {
  readonly protocol = "v5.channel.k8s.io";
  readonly out: { channel: number; text: string }[] = [];
  status: object | undefined;
  #resolve!: (s: object) => void;
  readonly ended = new Promise<object>((r) => (this.#resolve = r));
  get buffered(): number {
    return 0;
  }
  get open(): boolean {
    return this.status === undefined;
  }
  send(channel: Channel.Stdout | Channel.Stderr, data: Buffer, sent?: () => void): void {
    this.out.push({ channel, text: data.toString() });
    sent?.();
  }
  end(status: object): void {
    this.status = status;
    this.#resolve(status);
  }
}

/** What the stand-in runtime saw of one session. */
interface RuntimeSide {
  stdin: string;
  stdinEnded: boolean;
  sizes: TerminalSize[];
  closed: boolean;
}

const sessions: RuntimeSide[] = [];
const events = new EventEmitter();
let server: Server;
let base: string;

before(async () => {
  server = createServer();
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url!, "http://x");
    if (url.pathname.startsWith("/nope")) return void socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 15\r\n\r\ntoken not found");
    const tty = url.pathname.endsWith("/tty");
    const options: StreamOptions = { command: [], stdin: true, stdout: true, stderr: !tty, tty };
    const protocol = negotiateStreamProtocol(req, SPDY_CHANNEL_PROTOCOLS);
    void SpdyTransport.accept(socket, head, protocol, options).then((t) => {
      if (t === undefined) return;
      const side: RuntimeSide = { stdin: "", stdinEnded: false, sizes: [], closed: false };
      sessions.push(side);
      events.emit("accepted");
      // Echoes each input upper-cased on stdout and its length on stderr; at the input's end, a status (the path says which).
      t.on("stdin", (d) => {
        side.stdin += d.toString();
        t.send(Channel.Stdout, Buffer.from(d.toString().toUpperCase()));
        if (!tty) t.send(Channel.Stderr, Buffer.from(`${d.length}`));
      });
      t.on("resize", (size) => {
        side.sizes.push(size);
        t.send(Channel.Stdout, Buffer.from(`size ${size.width}x${size.height}`));
      });
      t.on("stdinEnd", () => {
        side.stdinEnded = true;
        if (url.pathname.includes("/fail")) t.end({ metadata: {}, status: "Failure", message: "command terminated with non-zero exit code", reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: "3" }] } });
        else t.end({ metadata: {}, status: "Success" });
      });
      t.on("close", () => {
        side.closed = true;
        events.emit("closed");
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/**
 * Resolves once the stand-in has all of a session's streams: its SpdyTransport
 * listens only from then on (the agent's clients, kubectl, send nothing before;
 * containerd's Go server keeps what comes early).
 */
const accepted = () => new Promise((r) => events.once("accepted", r));

const plain: StreamOptions = { command: [], stdin: true, stdout: true, stderr: true, tty: false };

test("stdin and its end reach the runtime; stdout and stderr come back apart; the runtime's status ends the client's session", async () => {
  const s = await dialStreamingServer(`${base}/attach/ok`);
  assert.equal(s.protocol, "v4.channel.k8s.io");
  const client = new FakeClient();
  const ready = accepted();
  relayAttach(client, s, plain);
  await ready;
  client.emit("stdin", Buffer.from("hello"));
  await new Promise((r) => setTimeout(r, 100));
  client.emit("stdinEnd");
  assert.deepEqual(await client.ended, { metadata: {}, status: "Success" });
  assert.deepEqual(client.out, [{ channel: Channel.Stdout, text: "HELLO" }, { channel: Channel.Stderr, text: "5" }]);
  const side = sessions.at(-1)!;
  assert.equal(side.stdin, "hello");
  assert.equal(side.stdinEnded, true);
});

test("a failure status from the runtime reaches the client as it is (exit code included)", async () => {
  const client = new FakeClient();
  const ready = accepted();
  relayAttach(client, await dialStreamingServer(`${base}/attach/fail`), plain);
  await ready;
  client.emit("stdin", Buffer.from("x"));
  await new Promise((r) => setTimeout(r, 200));
  client.emit("stdinEnd");
  const status = (await client.ended) as { reason?: string; details?: { causes?: { message?: string }[] } };
  assert.equal(status.reason, "NonZeroExitCode");
  assert.equal(status.details?.causes?.[0]?.message, "3");
});

test("a terminal: sizes go on the resize stream; no stderr stream; the client leaving closes the runtime's session", async () => {
  const client = new FakeClient();
  const ready = accepted();
  relayAttach(client, await dialStreamingServer(`${base}/attach/tty`), { ...plain, stderr: false, tty: true });
  await ready;
  client.emit("resize", { width: 120, height: 40 });
  client.emit("stdin", Buffer.from("x"));
  // Input is held a moment after the streams are taken (STDIN_SETTLE_MS); sizes are not.
  for (let i = 0; i < 100 && client.out.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(client.out, [{ channel: Channel.Stdout, text: "size 120x40" }, { channel: Channel.Stdout, text: "X" }]);
  const closed = new Promise((r) => events.once("closed", r));
  client.emit("close");
  await closed;
  assert.equal(sessions.at(-1)!.closed, true);
  assert.equal(sessions.at(-1)!.stdinEnded, true, "the runtime reads the end of stdin (stdinOnce ends there)");
});

test("refusals: a streaming server answering without an upgrade, nothing listening, a TLS URL, a bad URL", async () => {
  const refused = await dialStreamingServer(`${base}/nope`).then(() => undefined, (e: unknown) => e);
  assert.ok(refused instanceof StreamingServerError);
  assert.equal(refused.message, "error attaching through the runtime's streaming server: 404 Not Found: token not found");
  const closedPort = await dialStreamingServer("http://127.0.0.1:9/attach/x").then(() => undefined, (e: unknown) => e);
  assert.ok(closedPort instanceof StreamingServerError);
  assert.match(closedPort.message, /error attaching through the runtime's streaming server: connect ECONNREFUSED/);
  const tls = await dialStreamingServer("https://127.0.0.1:1/attach/x").then(() => undefined, (e: unknown) => e);
  assert.match((tls as Error).message, /not http \(a TLS streaming server is not supported\)/);
  const bad = await dialStreamingServer("::").then(() => undefined, (e: unknown) => e);
  assert.match((bad as Error).message, /does not parse/);
});

test("runtimeStatus: v4 JSON as is, older protocols' text as a failure, nothing as Success", () => {
  assert.deepEqual(runtimeStatus("", "v4.channel.k8s.io"), { metadata: {}, status: "Success" });
  assert.deepEqual(runtimeStatus(`{"metadata":{},"status":"Failure","message":"m"}`, "v4.channel.k8s.io"), { metadata: {}, status: "Failure", message: "m" });
  assert.equal((runtimeStatus("boom", "v2.channel.k8s.io") as { message?: string }).message, "Internal error occurred: error attaching to container: boom");
});
