// The prober against real probe targets: exec commands run on the host (the
// runtime's ExecSync is the one stand-in: it spawns the command instead of
// entering a container), a real local HTTP server and real TCP sockets.
// Probe seconds are 20 ms (secondMs) so thresholds are reached in milliseconds.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server } from "node:net";
import type { Container, Pod, Probe } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import { eventually } from "../testing/eventually.js";
import { Prober, type ProbeEvent } from "./prober.js";

const SECOND_MS = 20;

/** ExecSync stand-in: runs the command on the host; ["scripted"] answers the next exit code of `script`. */
function hostRuntime(script: number[] = []): CriClient & { execs: number } {
  const rt = {
    execs: 0,
    execSync(req: { cmd?: string[] }) {
      rt.execs++;
      const cmd = req.cmd ?? [];
      if (cmd[0] === "scripted") {
        const code = script.shift() ?? 1;
        return Promise.resolve({ exitCode: code, stdout: Buffer.from(`exit ${code}`), stderr: Buffer.alloc(0) });
      }
      return new Promise((resolve) =>
        execFile(cmd[0]!, cmd.slice(1), (err, stdout, stderr) =>
          resolve({ exitCode: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) }),
        ),
      );
    },
  };
  return rt as unknown as CriClient & { execs: number };
}

interface Harness {
  prober: Prober;
  events: ProbeEvent[];
  /** At each onChange: failed runs so far and probe commands run so far. */
  changes: { failures: number; execs: number }[];
  uid: string;
  started(): boolean;
  ready(): boolean;
  mustRestart(): ReturnType<Prober["mustRestart"]>;
}

let pods = 0;
function probe(container: Container, runtime: CriClient & { execs: number }): Harness {
  const uid = `uid-${++pods}`;
  const pod: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: `p${pods}`, namespace: "default", uid }, spec: { containers: [container] } };
  const events: ProbeEvent[] = [];
  const changes: Harness["changes"] = [];
  const prober = new Prober({ runtime, onChange: () => changes.push({ failures: events.length, execs: runtime.execs }), onEvent: (e) => events.push(e), secondMs: SECOND_MS });
  prober.update(pod, { uid, sandboxes: [], containers: [{ id: "c1", podSandboxId: "s1", metadata: { name: container.name!, attempt: 0 }, state: "CONTAINER_RUNNING" } as never] }, "127.0.0.1");
  return {
    prober,
    events,
    changes,
    uid,
    started: () => prober.started(uid, container.name!, "c1", container),
    ready: () => prober.ready(uid, container.name!, "c1", container),
    mustRestart: () => prober.mustRestart(uid, container.name!, "c1"),
  };
}

const periods = (n: number) => new Promise((r) => setTimeout(r, n * SECOND_MS));

async function listening(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as AddressInfo).port;
}

async function closedPort(): Promise<number> {
  const s = createTcpServer();
  const port = await listening(s);
  await new Promise((r) => s.close(r));
  return port;
}

test("exec: exit 0 makes the container ready; a non-zero exit is a failure reported with the command's output", async (t) => {
  const ok = probe({ name: "c", readinessProbe: { exec: { command: ["true"] }, periodSeconds: 1 } }, hostRuntime());
  t.after(() => ok.prober.stopAll());
  await eventually(() => ok.ready() || undefined, 5_000, "ready");

  const bad = probe({ name: "c", readinessProbe: { exec: { command: ["sh", "-c", "echo not yet; exit 3"] }, periodSeconds: 1, failureThreshold: 1 } }, hostRuntime());
  t.after(() => bad.prober.stopAll());
  const e = await eventually(() => bad.events[0], 5_000, "an Unhealthy event");
  assert.deepEqual([e.reason, e.container, e.message], ["Unhealthy", "c", "Readiness probe failed: not yet\n"]);
  assert.equal(bad.ready(), false);
});

test("httpGet: 200-399 succeed, other codes fail; the path and headers are sent", async (t) => {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createHttpServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    res.statusCode = req.url === "/ok" ? 200 : req.url === "/moved" ? 302 : 500;
    res.end();
  });
  const port = await listening(server);
  t.after(() => server.close());
  const http = (path: string): Probe => ({ httpGet: { path, port, httpHeaders: [{ name: "X-Probe", value: "yes" }] } as Probe["httpGet"], periodSeconds: 1, failureThreshold: 1 });

  for (const path of ["/ok", "/moved"]) {
    const h = probe({ name: "web", readinessProbe: http(path) }, hostRuntime());
    t.after(() => h.prober.stopAll());
    await eventually(() => h.ready() || undefined, 5_000, `${path} ready`);
    assert.equal(h.events.length, 0);
  }
  const failing = probe({ name: "web", livenessProbe: http("/broken") }, hostRuntime());
  t.after(() => failing.prober.stopAll());
  const why = await eventually(() => failing.mustRestart(), 5_000, "a liveness failure");
  assert.equal(failing.events[0]?.message, "Liveness probe failed: HTTP probe failed with statuscode: 500");
  assert.equal(why.message, "Container web failed liveness probe, will be restarted");
  const hit = seen.find((s) => s.url === "/ok")!;
  assert.equal(hit.headers["x-probe"], "yes");
  assert.ok(seen.some((s) => s.url === "/broken"));
});

test("tcpSocket: a listening socket succeeds, a closed port fails", async (t) => {
  const server = createTcpServer((sock) => sock.destroy());
  const port = await listening(server);
  t.after(() => server.close());
  const open = probe({ name: "db", readinessProbe: { tcpSocket: { port }, periodSeconds: 1 } }, hostRuntime());
  t.after(() => open.prober.stopAll());
  await eventually(() => open.ready() || undefined, 5_000, "ready on the open port");

  const closed = probe({ name: "db", readinessProbe: { tcpSocket: { port: await closedPort() }, periodSeconds: 1, failureThreshold: 1 } }, hostRuntime());
  t.after(() => closed.prober.stopAll());
  const e = await eventually(() => closed.events[0], 5_000, "a failure on the closed port");
  assert.match(e.message, /^Readiness probe failed: connect ECONNREFUSED/);
  assert.equal(closed.ready(), false);
});

test("startup: failures below failureThreshold do not restart; readiness and liveness wait until it succeeds", async (t) => {
  // The audit's case: a startup tcpSocket probe whose port opens only after a few failed checks.
  const port = await closedPort();
  const runtime = hostRuntime();
  const h = probe({
    name: "slow",
    startupProbe: { tcpSocket: { port }, periodSeconds: 1, failureThreshold: 100 },
    readinessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
    livenessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
  }, runtime);
  t.after(() => h.prober.stopAll());
  await eventually(() => (h.events.length >= 4 ? true : undefined), 5_000, "four failed startup checks");
  assert.equal(h.mustRestart(), undefined, "no restart below failureThreshold");
  assert.deepEqual([h.started(), h.ready(), runtime.execs], [false, false, 0], "not started, not ready, nothing else probed");
  assert.ok(h.events.every((e) => e.message.startsWith("Startup probe failed: ")));

  const server = createTcpServer((sock) => sock.destroy());
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  t.after(() => server.close());
  await eventually(() => h.started() || undefined, 5_000, "started");
  await eventually(() => h.ready() || undefined, 5_000, "ready once started");
  assert.ok(runtime.execs > 0);
  assert.equal(h.mustRestart(), undefined);
});

test("startup: failureThreshold consecutive failures ask for a restart, with the probe's terminationGracePeriodSeconds", async (t) => {
  const h = probe({ name: "never", startupProbe: { exec: { command: ["false"] }, periodSeconds: 1, failureThreshold: 4, terminationGracePeriodSeconds: 7 } }, hostRuntime());
  t.after(() => h.prober.stopAll());
  const why = await eventually(() => h.mustRestart(), 5_000, "the startup failure");
  assert.equal(h.events.length, 4, "exactly failureThreshold checks failed");
  assert.deepEqual([why.kind, why.message, why.gracePeriodSeconds], ["startup", "Container never failed startup probe, will be restarted", 7]);
  assert.deepEqual(h.changes, [{ failures: 4, execs: 4 }], "the pod worker is woken once, at the fourth failure");
});

test("liveness: a restart only after failureThreshold consecutive failures; a success in between starts the count again; then it holds", async (t) => {
  const runtime = hostRuntime([1, 1, 0, 1, 1, 1, 0, 0]);
  const h = probe({ name: "app", livenessProbe: { exec: { command: ["scripted"] }, periodSeconds: 1, failureThreshold: 3 } }, runtime);
  t.after(() => h.prober.stopAll());
  const why = await eventually(() => h.mustRestart(), 5_000, "the liveness failure");
  assert.equal(runtime.execs, 6, "fail, fail, succeed, then three failures");
  assert.deepEqual(h.changes, [{ failures: 5, execs: 6 }]);
  assert.equal(why.gracePeriodSeconds, undefined);
  await periods(5);
  assert.equal(runtime.execs, 6, "a failed liveness probe is not run again until the container is replaced");
  assert.ok(h.mustRestart());
});

test("readiness: successThreshold consecutive successes make it ready, failureThreshold failures unready; no probe before initialDelaySeconds", async (t) => {
  const runtime = hostRuntime([0, 1, 0, 0, 1, 1, 0]);
  const h = probe({ name: "api", readinessProbe: { exec: { command: ["scripted"] }, periodSeconds: 1, successThreshold: 2, failureThreshold: 2, initialDelaySeconds: 10 } }, runtime);
  t.after(() => h.prober.stopAll());
  await periods(5);
  assert.equal(runtime.execs, 0, "initialDelaySeconds not over");
  await eventually(() => (h.changes.length >= 2 ? true : undefined), 5_000, "ready, then unready");
  assert.deepEqual(h.changes.map((c) => c.execs), [4, 6], "0, 1, 0, 0: ready at the second success in a row; 1, 1: unready at the second failure");
  assert.equal(h.ready(), false);
  assert.equal(h.mustRestart(), undefined, "readiness never restarts");
});
