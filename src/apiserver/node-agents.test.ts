import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { selfSignedServingCert } from "../component/pki.js";
import { NodeAgentClient } from "./node-agents.js";

test("NodeAgentClient: a node that accepts the connection but never completes TLS fails after the connect timeout", async () => {
  // A real TCP listener that never answers: what a hung or firewalled agent looks like.
  const sockets: Socket[] = [];
  const silent = createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  // Any key pair does as the client's: the server never gets to look at it.
  const pair = await selfSignedServingCert();
  const client = new NodeAgentClient({ cert: pair.cert, key: pair.key, connectTimeoutMs: 200 });
  try {
    const started = performance.now();
    const port = (silent.address() as AddressInfo).port;
    await assert.rejects(client.get(`https://127.0.0.1:${port}/containerLogs/a/b/c`, new AbortController().signal), /dial 127\.0\.0\.1:\d+: i\/o timeout/);
    assert.ok(performance.now() - started < 5000);
  } finally {
    client.close();
    for (const s of sockets) s.destroy();
    silent.close();
  }
});
