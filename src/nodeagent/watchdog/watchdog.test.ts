import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { startWatchdog } from "./watchdog.js";

/** The test receives real datagrams; it needs python3 (a datagram socket) and systemd-notify (the sender). */
function skipReason(): string | undefined {
  const missing = ["python3", "systemd-notify"].filter((cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status !== 0);
  if (missing.length === 0) return undefined;
  const reason = `${missing.join(" and ")} not installed`;
  if (process.env.CI === "true") throw new Error(`${reason}; CI=true, so the watchdog test fails instead of skipping`);
  return reason;
}

/** A UNIX datagram socket served by python3, yielding each datagram received as a line. */
async function datagramSocket(): Promise<{ path: string; next(): Promise<string>; close(): void }> {
  const path = join(mkdtempSync(join(tmpdir(), "nodeagent-notify-")), "notify.sock");
  const py = spawn("python3", ["-u", "-c", [
    "import socket,sys",
    "s=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)",
    `s.bind(${JSON.stringify(path)})`,
    "print('bound')",
    "while True: print(s.recv(4096).decode().replace(chr(10),' '))",
  ].join("\n")], { stdio: ["ignore", "pipe", "inherit"] });
  const lines: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  createInterface({ input: py.stdout }).on("line", (l) => (waiters.length ? waiters.shift()!(l) : lines.push(l)));
  const next = () => (lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((r) => waiters.push(r)));
  assert.equal(await next(), "bound");
  return { path, next, close: () => py.kill() };
}

const reason = skipReason();

test("watchdog: READY=1 at start, then WATCHDOG=1 every half period while healthy", { skip: reason }, async () => {
  const sock = await datagramSocket();
  const stop = new AbortController();
  let healthy = true;
  try {
    const h = startWatchdog({ env: { NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: "1000000" }, healthy: () => healthy, signal: stop.signal });
    assert.equal(h.intervalMs, 500);
    const ready = await sock.next();
    assert.match(ready, /\bREADY=1\b/);
    assert.match(ready, new RegExp(`MAINPID=${process.pid}\\b`), "sent on behalf of the agent process");
    const t0 = Date.now();
    assert.match(await sock.next(), /\bWATCHDOG=1\b/);
    assert.match(await sock.next(), /\bWATCHDOG=1\b/);
    const elapsed = Date.now() - t0;
    assert.ok(elapsed >= 400 && elapsed < 1500, `two pings half a period apart (${elapsed} ms)`);
    // Unhealthy: the pings stop, so the manager would restart us. Healthy again: they resume.
    healthy = false;
    let received = 0;
    const counting = (async () => { for (;;) { await sock.next(); received++; } })();
    void counting;
    await new Promise((r) => setTimeout(r, 1200));
    const whileUnhealthy = received;
    healthy = true;
    await new Promise((r) => setTimeout(r, 700));
    assert.ok(whileUnhealthy <= 1, `at most one ping in flight when health failed (got ${whileUnhealthy})`);
    assert.ok(received > whileUnhealthy, "pings resume once healthy");
  } finally {
    stop.abort();
    sock.close();
  }
});

test("watchdog: off without WATCHDOG_USEC, and below the 1 s minimum", () => {
  const sent: string[] = [];
  const stop = new AbortController();
  const notifier = async (s: string) => void sent.push(s);
  assert.equal(startWatchdog({ env: {}, healthy: () => true, signal: stop.signal, notifier }).intervalMs, undefined);
  assert.deepEqual(sent, []);
  assert.equal(startWatchdog({ env: { NOTIFY_SOCKET: "/x" }, healthy: () => true, signal: stop.signal, notifier }).intervalMs, undefined);
  const logs: string[] = [];
  const h = startWatchdog({ env: { NOTIFY_SOCKET: "/x", WATCHDOG_USEC: "500000" }, healthy: () => true, signal: stop.signal, notifier, log: (l) => logs.push(l) });
  assert.equal(h.intervalMs, undefined);
  assert.match(logs.join("\n"), /below the 1000 ms minimum/);
  assert.deepEqual(sent, ["READY=1", "READY=1"]);
  stop.abort();
});
