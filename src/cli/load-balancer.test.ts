// The joined agent's load balancer: connections pass through to the first
// server; when it stops answering, the next connection goes to the next one
// (within the dial timeout) and a broken connection's retry lands there too;
// list updates keep the current server; bad lists are refused.

import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, createServer, type Server, type Socket } from "node:net";
import { LoadBalancer } from "./load-balancer.js";

/** A TCP server answering every line with its name. */
async function namedServer(name: string): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("data", () => s.write(name));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    server,
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** What answers a connection through the balancer ("" when it is closed without an answer). */
function ask(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    let got = "";
    s.on("connect", () => s.write("who?\n"));
    s.on("data", (d) => {
      got += d.toString();
      s.end();
    });
    s.on("error", () => resolve(got));
    s.on("close", () => resolve(got));
  });
}

test("fails over to the next server when the current one stops answering", async () => {
  const a = await namedServer("a");
  const b = await namedServer("b");
  const lines: string[] = [];
  const lb = new LoadBalancer({ servers: [a.url, b.url], dialTimeoutMs: 500, log: (l) => lines.push(l) });
  await lb.listen();
  const port = Number(new URL(lb.url).port);
  try {
    assert.equal(await ask(port), "a");
    assert.equal(lb.current, a.url);
    await a.close();
    const started = Date.now();
    assert.equal(await ask(port), "b");
    assert.ok(Date.now() - started < 2000, "the fail-over takes less than the dial timeout plus a little");
    assert.equal(lb.current, b.url);
    assert.ok(lines.some((l) => l.includes(`${a.url} does not answer; switching to ${b.url}`)), lines.join("\n"));
    // It stays on b; a list update that still names b keeps it current.
    lb.setServers([a.url, b.url, "https://127.0.0.1:1"]);
    assert.equal(lb.current, b.url);
    assert.equal(await ask(port), "b");
    // With no server answering, the client's connection is closed.
    await b.close();
    assert.equal(await ask(port), "");
  } finally {
    await lb.close();
  }
});

test("refuses a list with no https server; ignores malformed entries and duplicates", () => {
  assert.throws(() => new LoadBalancer({ servers: ["not a url", "http://x:1"], log: () => {} }), /no API server/);
  const lb = new LoadBalancer({ servers: ["https://a:1", "junk", "https://a:1/", "https://[::1]:2"], log: () => {} });
  assert.deepEqual(lb.servers, ["https://a:1", "https://[::1]:2"]);
  lb.setServers(["junk"]);
  assert.deepEqual(lb.servers, ["https://a:1", "https://[::1]:2"], "an update with no usable server changes nothing");
});
