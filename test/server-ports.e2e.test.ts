// `orch server`'s parts on one host with another server: the controller
// manager's and scheduler's default ports (10257, 10259) taken, a second
// server takes free ones, says which in its ready line and serves there; a
// port given on the command line that is taken stops the start with the flag
// to change.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { request } from "node:https";
import { startOrch } from "./support/orch-process.js";

const DEFAULTS = { "controller-manager": 10257, scheduler: 10259 };
const holders: Server[] = [];

/** Holds `port` on every address; an EADDRINUSE means something already does, which serves the test as well. */
function hold(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => (err.code === "EADDRINUSE" ? resolve() : reject(err)));
    server.listen(port, () => {
      holders.push(server);
      resolve();
    });
  });
}

const healthz = (port: number) =>
  new Promise<number>((resolve, reject) => {
    request({ host: "127.0.0.1", port, path: "/healthz", rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).once("error", reject).end();
  });

before(async () => {
  for (const port of Object.values(DEFAULTS)) await hold(port);
});
after(() => {
  for (const h of holders) h.close();
});

test("default ports in use: free ones instead, named in the ready line and the log, and served", async () => {
  const orch = await startOrch("server", ["--disable-agent"], { defaultPorts: true });
  try {
    const ready = /orch server ready: .*; ports: ([^;\n]*)/.exec(orch.output());
    assert.ok(ready, orch.output());
    const ports = Object.fromEntries(ready[1]!.split(", ").map((p) => p.split(" ")).map(([name, port]) => [name, Number(port)]));
    assert.deepEqual(Object.keys(ports).sort(), ["controller-manager", "scheduler"]);
    for (const [name, port] of Object.entries(DEFAULTS)) {
      assert.notEqual(ports[name], port);
      assert.match(orch.output(), new RegExp(`orch-${name}: port ${port} is in use \\(another orch server on this host\\?\\): serving on ${ports[name]} instead \\(--${name}-port sets one\\)`));
      // The scheduler's /healthz includes its caches' sync, which may follow the ready line by a moment.
      let status = 0;
      for (const deadline = Date.now() + 15_000; status !== 200 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) status = await healthz(ports[name]!);
      assert.equal(status, 200, `${name} /healthz on ${ports[name]}`);
    }
  } finally {
    await orch.stop();
  }
});

test("a port given on the command line that is in use stops the start, naming the flags", async () => {
  await assert.rejects(
    startOrch("server", ["--disable-agent", `--scheduler-port=${DEFAULTS.scheduler}`, "--controller-manager-port=0"], { defaultPorts: true, readyTimeoutMs: 60_000 }),
    /exited with 1[\s\S]*EADDRINUSE[\s\S]*--controller-manager-port and --scheduler-port pick other ports/,
  );
});
