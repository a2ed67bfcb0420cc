// Running one probe (exec through the runtime's ExecSync, httpGet, tcpSocket,
// grpc) with its timeout, as upstream: HTTP 200–399, exit code 0 and the
// health service's SERVING succeed.

import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import type { Container, Probe } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import { grpcHealthCheck } from "./grpc-health.js";

export interface ProbeTarget {
  runtime: CriClient;
  containerId: string;
  container: Container;
  podIP: string;
}

export interface ProbeOutcome {
  ok: boolean;
  output: string;
}

function resolvePort(port: number | string | undefined, container: Container): number {
  if (typeof port === "number") return port;
  const named = (container.ports ?? []).find((p) => p.name === port);
  if (named?.containerPort) return named.containerPort;
  const n = Number(port);
  if (Number.isInteger(n) && n > 0) return n;
  throw new Error(`port ${JSON.stringify(port)} not found in container ${container.name}`);
}

export async function runProbe(probe: Probe, target: ProbeTarget): Promise<ProbeOutcome> {
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.exec) {
      const r = await target.runtime.execSync({ containerId: target.containerId, cmd: probe.exec.command ?? [], timeout: Math.ceil(timeoutMs / 1000) }, { timeoutMs: timeoutMs + 1000 });
      return { ok: r.exitCode === 0, output: `${r.stdout?.toString() ?? ""}${r.stderr?.toString() ?? ""}`.slice(0, 1024) };
    }
    if (probe.httpGet) {
      const g = probe.httpGet;
      const port = resolvePort(g.port, target.container);
      const host = g.host || target.podIP || "127.0.0.1";
      const headers = Object.fromEntries(((g as { httpHeaders?: { name: string; value: string }[] }).httpHeaders ?? []).map((h) => [h.name, h.value]));
      const send = (g.scheme ?? "HTTP").toUpperCase() === "HTTPS" ? httpsRequest : httpRequest;
      return await new Promise<ProbeOutcome>((resolve) => {
        const req = send({ host, port, path: g.path || "/", method: "GET", timeout: timeoutMs, headers: { "user-agent": "orch-probe/1.0", ...headers }, rejectUnauthorized: false }, (res) => {
          res.resume();
          const code = res.statusCode ?? 0;
          resolve({ ok: code >= 200 && code < 400, output: `HTTP probe failed with statuscode: ${code}` });
        });
        req.on("timeout", () => req.destroy(new Error(`Get "http://${host}:${port}${g.path ?? "/"}": context deadline exceeded`)));
        req.on("error", (err) => resolve({ ok: false, output: err.message }));
        req.end();
      });
    }
    if (probe.tcpSocket) {
      const port = resolvePort(probe.tcpSocket.port, target.container);
      const host = probe.tcpSocket.host || target.podIP || "127.0.0.1";
      return await new Promise<ProbeOutcome>((resolve) => {
        const sock = connect({ host, port, timeout: timeoutMs });
        sock.once("connect", () => {
          sock.destroy();
          resolve({ ok: true, output: "" });
        });
        sock.once("timeout", () => {
          sock.destroy();
          resolve({ ok: false, output: `dial tcp ${host}:${port}: i/o timeout` });
        });
        sock.once("error", (err) => resolve({ ok: false, output: err.message }));
      });
    }
    if (probe.grpc) {
      const host = target.podIP || "127.0.0.1";
      return await grpcHealthCheck({ host, port: probe.grpc.port ?? 0, service: probe.grpc.service ?? "", timeoutMs });
    }
    return { ok: false, output: "unsupported probe handler (exec, httpGet, tcpSocket and grpc are supported)" };
  } catch (err) {
    return { ok: false, output: (err as Error).message };
  }
}
