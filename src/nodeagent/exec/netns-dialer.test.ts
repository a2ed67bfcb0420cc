// Connections inside a network namespace (./netns-dialer.ts) and port-forward
// through them (./port-forward.ts) against a server that listens only on the
// namespace's 127.0.0.1, as a pod's loopback-only server does: a real
// namespace (`ip netns add`), the server started inside it with nsenter.
// Banner first (nothing is read by the helper), echo, half-close both ways,
// 50 connections at once through one helper, refused ports in containerd's
// words, a missing namespace, the idle exit, and the connect latency against a
// plain loopback connect (printed). Root only: skips with the reason otherwise.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { PodSandboxStatusResponse } from "../cri/index.js";
import { dialPortForward, forwardRequest } from "../testing/port-forward-client.js";
import { NetnsDialer, NetnsDialError } from "./netns-dialer.js";
import { PORT_FORWARD_PATH, PortForward, sandboxNetns } from "./port-forward.js";

const skip = process.getuid?.() !== 0 ? "network namespaces need root" : false;
const NAME = `orch-nsdial-${process.pid}`;
const NETNS = `/run/netns/${NAME}`;
const PORT = 17000 + (process.pid % 1000);
// Inside the namespace: says "hello" first, echoes upper-cased, answers the client's FIN with "bye" and its own FIN.
const SERVER = `require("net").createServer({allowHalfOpen:true},(s)=>{s.on("error",()=>{});s.write("hello ");s.on("data",(d)=>s.write(d.toString().toUpperCase()));s.on("end",()=>s.end("bye"))}).listen(${PORT},"127.0.0.1",()=>process.stdout.write("up\\n"))`;

let server: ChildProcess;

async function read(socket: Socket): Promise<string> {
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString()));
  await new Promise((r) => socket.once("end", r));
  return text;
}

before(async () => {
  if (skip) return;
  execFileSync("ip", ["netns", "add", NAME]);
  execFileSync("ip", ["-n", NAME, "link", "set", "lo", "up"]);
  server = spawn("nsenter", [`--net=${NETNS}`, process.execPath, "-e", SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((r) => server.stdout!.once("data", () => r()));
});

after(() => {
  if (skip) return;
  server?.kill("SIGKILL");
  execFileSync("ip", ["netns", "delete", NAME]);
});

test("sandboxNetns: the embedded runtime's netns, containerd's runtime spec or pid", () => {
  assert.equal(sandboxNetns(JSON.stringify({ hostNetwork: false, netns: "/run/netns/a" })), "/run/netns/a");
  assert.equal(sandboxNetns(JSON.stringify({ hostNetwork: true, netns: "" })), "host");
  assert.equal(sandboxNetns(JSON.stringify({ pid: 42, runtimeSpec: { linux: { namespaces: [{ type: "pid" }, { type: "network", path: "/var/run/netns/cni-1" }] } } })), "/var/run/netns/cni-1");
  assert.equal(sandboxNetns(JSON.stringify({ pid: 42, runtimeSpec: { linux: { namespaces: [{ type: "pid" }] } } })), "host");
  assert.equal(sandboxNetns(JSON.stringify({ pid: 42 })), "/proc/42/ns/net");
  assert.equal(sandboxNetns("not json"), undefined);
  assert.equal(sandboxNetns(undefined), undefined);
});

describe("NetnsDialer", { skip }, () => {
  test("reaches a server on the namespace's 127.0.0.1 that the host cannot; its first words, echo and half-close arrive", async () => {
    const fromHost = await new Promise<string>((r) => connect(PORT, "127.0.0.1").once("connect", () => r("connected")).once("error", (e: NodeJS.ErrnoException) => r(e.code ?? "")));
    assert.equal(fromHost, "ECONNREFUSED", "the server is not on the host's loopback");
    const dialer = new NetnsDialer();
    try {
      const socket = await dialer.dial(NETNS, PORT);
      const text = read(socket);
      socket.write("ping");
      await new Promise((r) => setTimeout(r, 50));
      socket.end();
      assert.equal(await text, "hello PINGbye");
      assert.equal(dialer.helpers, 1);
    } finally {
      dialer.close();
    }
  });

  test("50 connections at once through one helper; a refused port in containerd's words; a missing namespace", async () => {
    const dialer = new NetnsDialer();
    try {
      const all = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
        const s = await dialer.dial(NETNS, PORT);
        const text = read(s);
        s.end(`c${i}`);
        return text;
      }));
      assert.deepEqual(all, Array.from({ length: 50 }, (_, i) => `hello C${i}bye`));
      assert.equal(dialer.helpers, 1);
      const refused = await dialer.dial(NETNS, PORT + 1).then(() => undefined, (e: unknown) => e);
      assert.ok(refused instanceof NetnsDialError);
      assert.equal(refused.failure?.v4, "ECONNREFUSED");
      const missing = await dialer.dial("/run/netns/orch-no-such-namespace", PORT).then(() => undefined, (e: unknown) => e);
      assert.ok(missing instanceof NetnsDialError);
      assert.equal(missing.failure, undefined);
      assert.match(missing.message, /orch-no-such-namespace/);
    } finally {
      dialer.close();
    }
  });

  test("a helper exits once idle; the next dial starts another", async () => {
    const dialer = new NetnsDialer({ idleMs: 200 });
    try {
      (await dialer.dial(NETNS, PORT)).destroy();
      assert.equal(dialer.helpers, 1);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(dialer.helpers, 0);
      const s = await dialer.dial(NETNS, PORT);
      const text = read(s);
      s.end();
      assert.equal(await text, "hello bye");
    } finally {
      dialer.close();
    }
  });

  test("connect latency: a plain loopback connect, the first dial into a namespace (helper start), later ones (printed)", async () => {
    const host = createTcpServer((s) => s.end());
    await new Promise<void>((r) => host.listen(0, "127.0.0.1", r));
    const hostPort = (host.address() as AddressInfo).port;
    const dialer = new NetnsDialer();
    const time = async (f: () => Promise<Socket>) => {
      const t = process.hrtime.bigint();
      (await f()).destroy();
      return Number(process.hrtime.bigint() - t) / 1e6;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    try {
      const plain: number[] = [];
      for (let i = 0; i < 50; i++) plain.push(await time(() => new Promise((r) => { const s = connect(hostPort, "127.0.0.1", () => r(s)); })));
      const cold = await time(() => dialer.dial(NETNS, PORT));
      const warm: number[] = [];
      for (let i = 0; i < 50; i++) warm.push(await time(() => dialer.dial(NETNS, PORT)));
      console.log(`connect latency: plain loopback median ${median(plain).toFixed(2)} ms; into the namespace: first ${cold.toFixed(1)} ms (helper start), then median ${median(warm).toFixed(2)} ms`);
      assert.ok(median(warm) < 50, "a dial through a running helper takes no process start");
    } finally {
      dialer.close();
      host.close();
    }
  });
});

describe("port-forward to a pod's loopback-only server", { skip }, () => {
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "lo", namespace: "default", uid: "uid-lo" }, spec: { containers: [] } } as unknown as Pod;
  let agent: Server;
  let forward: PortForward;

  before(async () => {
    forward = new PortForward({
      pods: () => [{ pod, status: { phase: "Running", podIP: "10.255.255.1" } as PodStatus }],
      runtime: {
        listPodSandbox: async () => ({ items: [{ id: "sandbox-lo", metadata: { name: "lo", namespace: "default", uid: "uid-lo", attempt: 0 }, state: "SANDBOX_READY", createdAt: 0, labels: {}, annotations: {}, runtimeHandler: "" }] }),
        podSandboxStatus: async () => ({ info: { info: JSON.stringify({ hostNetwork: false, netns: NETNS }) } }) as unknown as PodSandboxStatusResponse,
      },
    });
    agent = createServer();
    agent.on("upgrade", (req, socket, head) => void forward.upgrade(req, socket, head, new URL(req.url!, "http://agent")));
    await new Promise<void>((r) => agent.listen(0, "127.0.0.1", r));
  });
  after(async () => {
    forward?.close();
    agent?.closeAllConnections();
    await new Promise<void>((r) => agent.close(() => r()));
  });

  test("20 requests on one session reach it inside the namespace (not the pod IP); a refused port names the namespace", async () => {
    const { session } = await dialPortForward((agent.address() as AddressInfo).port, `${PORT_FORWARD_PATH}default/lo`);
    const texts = await Promise.all(Array.from({ length: 20 }, (_, i) => {
      const r = forwardRequest(session!, PORT, `r${i}`);
      r.data.write(Buffer.from(`x${i}`));
      r.data.end();
      return r.dataText.then((t) => t.text);
    }));
    assert.deepEqual(texts, Array.from({ length: 20 }, (_, i) => `hello X${i}bye`));
    const bad = forwardRequest(session!, PORT + 1, "bad");
    const text = (await bad.errorText).text;
    assert.ok(text.startsWith(`error forwarding port ${PORT + 1} to pod sandbox-lo, uid : failed to execute portforward in network namespace "${NETNS}": failed to connect to localhost:${PORT + 1} inside namespace "sandbox-lo", IPv4: dial tcp4 127.0.0.1:${PORT + 1}: connect: connection refused IPv6 dial tcp6 [::1]:${PORT + 1}: `), text);
    // The session goes on after a failed request.
    const again = forwardRequest(session!, PORT, "again");
    again.data.end();
    assert.equal((await again.dataText).text, "hello bye");
    session!.goAway();
  });
});
