// The component server's Upgrade routes (what the node agent's /exec rides
// on): behind the same access check as the other non-public paths, a prefix
// match hands the connection to its handler; other paths are a 404.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ensureCredentials } from "./pki.js";
import { defaultFeatureGates } from "./feature-gates.js";
import { startComponentServer, type RunningComponentServer } from "./component-server.js";
import { httpsUpgrade } from "./testing/https-upgrade.js";

let dir: string;
let server: RunningComponentServer;
let client: { cert: string; key: string };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "orch-upgrade-"));
  const credentials = await ensureCredentials(dir);
  client = credentials.nodeAgentClient;
  server = await startComponentServer({
    name: "orch-test", featureGates: defaultFeatureGates(), bindAddress: "127.0.0.1", port: 0, clientCa: credentials.caCertPem, log: () => {},
    upgrades: {
      "/echo/": (req, socket) => {
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\nX-Path: ${req.url}\r\n\r\n`);
        socket.pipe(socket);
      },
    },
  });
});

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function upgrade(path: string, clientCert?: { cert: string; key: string }): Promise<{ status: number; body: string; path?: string; echoed?: string }> {
  const r = await httpsUpgrade(`${server.url}${path}`, { protocol: "test", ...(clientCert ? { clientCert } : {}) });
  if (r.socket === undefined) return { status: r.status, body: r.body };
  const socket = r.socket;
  const echoed = await new Promise<string>((resolve) => {
    socket.once("data", (d: Buffer) => resolve(d.toString()));
    socket.write("ping");
  });
  socket.destroy();
  return { status: r.status, body: "", path: String(r.headers["x-path"]), echoed };
}

test("an Upgrade without credentials is refused with 401, before any handler sees it", async () => {
  assert.deepEqual(await upgrade("/echo/x"), { status: 401, body: "Unauthorized\n" });
});

test("a client certificate of the cluster CA reaches the handler of the path's prefix, which owns the connection", async () => {
  assert.deepEqual(await upgrade("/echo/a/b?c=d", client), { status: 101, body: "", path: "/echo/a/b?c=d", echoed: "ping" });
});

test("an Upgrade on a path no handler takes is a 404", async () => {
  assert.deepEqual(await upgrade("/metrics", client), { status: 404, body: "404 page not found\n" });
});
