// The agent's /portForward over a real HTTP upgrade and a SPDY client of our
// own (./spdy/connection.ts in client mode): request pairing by requestID and
// by stream ids, splicing to a TCP server, half-close, refusals of malformed
// streams (reset, as upstream), upstream's error text for a port nothing
// listens on, and the handshake refusals.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from "node:net";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { PodSandboxStatusResponse } from "../cri/index.js";
import { collectStream, dialPortForward, forwardRequest } from "../testing/port-forward-client.js";
import { PORT_FORWARD_PATH, PortForward, streamHeaderError } from "./port-forward.js";

const pod: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "default", uid: "uid-1" }, spec: { hostNetwork: true, containers: [] } } as unknown as Pod;
const noIp: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "pending", namespace: "default", uid: "uid-2" }, spec: { containers: [] } } as unknown as Pod;
const status: PodStatus = { phase: "Running" } as PodStatus;

let agent: Server;
let echo: TcpServer;
let echoPort: number;
let closedPort: number;
let forward: PortForward;

before(async () => {
  // Echoes upper-cased; after the client's half-close it writes "bye" and ends.
  echo = createTcpServer({ allowHalfOpen: true }, (s) => {
    s.on("data", (d: Buffer) => s.write(d.toString().toUpperCase()));
    s.on("end", () => s.end("bye"));
  });
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
  echoPort = (echo.address() as AddressInfo).port;
  const probe = createTcpServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));

  forward = new PortForward({
    pods: () => [{ pod, status }, { pod: noIp, status }],
    runtime: {
      listPodSandbox: async () => ({ items: [{ id: "sandbox-1", metadata: { name: "web", namespace: "default", uid: "uid-1", attempt: 0 }, state: "SANDBOX_READY", createdAt: 0, labels: {}, annotations: {}, runtimeHandler: "" }] }),
      podSandboxStatus: async () => ({ info: { info: JSON.stringify({ hostNetwork: true, netns: "" }) } }) as unknown as PodSandboxStatusResponse,
    },
  });
  agent = createServer();
  agent.on("upgrade", (req, socket, head) => void forward.upgrade(req, socket, head, new URL(req.url!, "http://agent")));
  await new Promise<void>((r) => agent.listen(0, "127.0.0.1", r));
});

after(async () => {
  forward.close();
  agent.closeAllConnections();
  await new Promise<void>((r) => agent.close(() => r()));
  await new Promise<void>((r) => echo.close(() => r()));
});

const dial = (path = `${PORT_FORWARD_PATH}default/web`, headers?: string) => dialPortForward((agent.address() as AddressInfo).port, path, headers);
const collect = collectStream;
const request = forwardRequest;

describe("port-forward streams", () => {
  test("headers: upstream's refusals for a missing or bad port or stream type", () => {
    const h = (headers: Record<string, string>) => ({ header: (n: string) => headers[n.toLowerCase()] });
    assert.equal(streamHeaderError(h({ streamtype: "data" })), `"port" header is required`);
    assert.equal(streamHeaderError(h({ port: "x", streamtype: "data" })), `unable to parse "x" as a port: strconv.ParseUint: parsing "x": invalid syntax`);
    assert.equal(streamHeaderError(h({ port: "70000", streamtype: "data" })), `unable to parse "70000" as a port: strconv.ParseUint: parsing "70000": value out of range`);
    assert.equal(streamHeaderError(h({ port: "0", streamtype: "data" })), `port "0" must be > 0`);
    assert.equal(streamHeaderError(h({ port: "80" })), `"streamType" header is required`);
    assert.equal(streamHeaderError(h({ port: "80", streamtype: "stdin" })), `invalid stream type "stdin"`);
    assert.equal(streamHeaderError(h({ port: "80", streamtype: "error" })), undefined);
  });

  test("a request's error and data streams are paired; bytes go both ways; the client's FIN reaches the pod and the pod's end ends both streams", async () => {
    const { session } = await dial();
    const r = request(session!, echoPort, "0");
    r.data.write(Buffer.from("hello"));
    await new Promise((res) => setTimeout(res, 100));
    r.data.end();
    assert.equal((await r.dataText).text, "HELLObye");
    assert.equal((await r.errorText).text, "");
    session!.goAway();
  });

  test("4 MiB from the pod arrive whole and in order (the pod's socket paused and resumed around the session's queue)", async () => {
    const big = Buffer.alloc(4 << 20);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    const source = createTcpServer((s) => s.end(big));
    await new Promise<void>((r) => source.listen(0, "127.0.0.1", r));
    try {
      const { session } = await dial();
      const r = request(session!, (source.address() as AddressInfo).port, "big");
      const chunks: Buffer[] = [];
      r.data.on("data", (d) => chunks.push(d));
      await r.dataText;
      assert.equal(Buffer.compare(Buffer.concat(chunks), big), 0);
      assert.equal((await r.errorText).text, "");
      session!.goAway();
    } finally {
      source.close();
    }
  });

  test("20 requests at once on one session, each its own connection", async () => {
    const { session } = await dial();
    const all = Array.from({ length: 20 }, (_, i) => {
      const r = request(session!, echoPort, String(i));
      r.data.write(Buffer.from(`req-${i}`));
      r.data.end();
      return r.dataText;
    });
    const texts = (await Promise.all(all)).map((t) => t.text);
    assert.deepEqual(texts, Array.from({ length: 20 }, (_, i) => `REQ-${i}bye`));
    session!.goAway();
  });

  test("without requestID (old clients) error stream N pairs with data stream N+2", async () => {
    const { session } = await dial();
    const r = request(session!, echoPort);
    r.data.end();
    assert.equal((await r.dataText).text, "bye");
    session!.goAway();
  });

  test("a port nothing listens on: upstream's message on the error stream, and the session still forwards", async () => {
    const { session } = await dial();
    const bad = request(session!, closedPort, "a");
    // containerd's words: localhost in the sandbox's namespace ("host" for a hostNetwork pod), IPv4 then IPv6.
    const text = (await bad.errorText).text;
    assert.ok(text.startsWith(`error forwarding port ${closedPort} to pod sandbox-1, uid : failed to execute portforward in network namespace "host": failed to connect to localhost:${closedPort} inside namespace "sandbox-1", IPv4: dial tcp4 127.0.0.1:${closedPort}: connect: connection refused IPv6 dial tcp6 [::1]:${closedPort}: connect: `), text);
    const good = request(session!, echoPort, "b");
    good.data.end();
    assert.equal((await good.dataText).text, "bye");
    session!.goAway();
  });

  test("a stream without a port is reset (as upstream rejects it), the session goes on", async () => {
    const { session } = await dial();
    const bad = session!.open([["streamType", "data"], ["requestID", "x"]]);
    const closed = new Promise<void>((r) => bad.once("close", () => r()));
    await closed;
    assert.equal(bad.closed, true);
    const good = request(session!, echoPort, "y");
    good.data.end();
    assert.equal((await good.dataText).text, "bye");
    session!.goAway();
  });

  test("a second error stream for one request is reset and named on the first", async () => {
    const { session } = await dial();
    const first = session!.open([["streamType", "error"], ["port", String(echoPort)], ["requestID", "e"]]);
    const firstText = collect(first);
    const second = session!.open([["streamType", "error"], ["port", String(echoPort)], ["requestID", "e"]]);
    await new Promise<void>((r) => second.once("close", () => r()));
    const data = session!.open([["streamType", "data"], ["port", String(echoPort)], ["requestID", "e"]]);
    const dataText = collect(data);
    data.end();
    assert.equal((await dataText).text, "bye");
    assert.equal((await firstText).text, "error processing stream for request e: error stream already assigned");
    session!.goAway();
  });

  test("a pod without a ready sandbox (no network namespace): the reason on the error stream", async () => {
    const { session } = await dial(`${PORT_FORWARD_PATH}default/pending`);
    const r = request(session!, 80, "z");
    assert.equal((await r.errorText).text, `error forwarding port 80 to pod default/pending, uid : network namespace for sandbox "default/pending" is closed`);
    session!.goAway();
  });

  test("handshake refusals: unknown pod 404, no protocol 400, another protocol 403, a WebSocket without the tunnel subprotocol 400", async () => {
    const unknown = await dial(`${PORT_FORWARD_PATH}default/nope`);
    assert.match(unknown.head, /^HTTP\/1.1 404/);
    assert.equal(unknown.body.trim(), "pod does not exist");
    const noProtocol = await dial(undefined, "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n");
    assert.match(noProtocol.head, /^HTTP\/1.1 400/);
    assert.match(noProtocol.body, /X-Stream-Protocol-Version is required/);
    const other = await dial(undefined, "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n");
    assert.match(other.head, /^HTTP\/1.1 403/);
    assert.match(other.head, /X-Accepted-Stream-Protocol-Versions: portforward.k8s.io/);
    const ws = await dial(undefined, "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n");
    assert.match(ws.head, /^HTTP\/1.1 400/);
    assert.match(ws.body, /SPDY\/3.1\+portforward.k8s.io is required/);
  });
});
