// Recorded client histories for the fault suite: every operation a client
// sends on a ConfigMap is an invoke event and a completion (ok with the
// resourceVersion and value it saw, a definite failure such as 404/409, or an
// unknown outcome: timeout, reset, 5xx), with monotonic timestamps. The
// linearizability checker (linearizability.ts) reads these; HistoryClient
// produces them through the real HTTP API.

import { request as httpsRequest, Agent } from "node:https";
import { performance } from "node:perf_hooks";
import type { ClientConfig } from "../../src/client/kubeconfig.js";

export type OpKind = "create" | "update" | "delete" | "get";

/** ok: the server said so; fail: it definitely did not happen (4xx); unknown: it may or may not have. */
export type Outcome =
  | { status: "ok"; rv: number; value?: string }
  | { status: "fail"; code: number; reason: string }
  | { status: "unknown"; error: string };

export interface Op {
  id: number;
  client: string;
  kind: OpKind;
  key: string;
  /** create/update: the value written. */
  value?: string;
  /** update: the resourceVersion precondition. */
  precondition?: number;
  invoke: number;
  /** Infinity while pending, or when the outcome is unknown. */
  complete: number;
  outcome?: Outcome;
}

export class History {
  readonly ops: Op[] = [];
  #next = 0;
  invoke(client: string, kind: OpKind, key: string, fields: { value?: string; precondition?: number } = {}): Op {
    const op: Op = { id: this.#next++, client, kind, key, ...fields, invoke: performance.now(), complete: Infinity };
    this.ops.push(op);
    return op;
  }
  complete(op: Op, outcome: Outcome): void {
    op.outcome = outcome;
    op.complete = outcome.status === "unknown" ? Infinity : performance.now();
  }
  /** Acknowledged create/update writes: these must survive any fault. */
  acknowledgedWrites(): Op[] {
    return this.ops.filter((o) => (o.kind === "create" || o.kind === "update") && o.outcome?.status === "ok");
  }
  /** Client errors by kind: "409", "timeout", "ECONNREFUSED", "503", ... */
  errorsByKind(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const o of this.ops) {
      const oc = o.outcome;
      if (oc === undefined || oc.status === "ok") continue;
      const kind = oc.status === "fail" ? (oc.code === 0 ? oc.reason : String(oc.code)) : oc.error;
      out[kind] = (out[kind] ?? 0) + 1;
    }
    return out;
  }
}

export interface HttpResult {
  status: number;
  json: any;
}

/** Classifies a transport error for the error table. */
export function errorKind(err: unknown): string {
  const e = err as { code?: string; name?: string };
  if (e.name === "TimeoutError" || e.code === "ETIMEDOUT" || e.code === "ABORT_ERR") return "timeout";
  return e.code ?? e.name ?? "error";
}

/** One HTTPS request with the client's credentials; rejects on transport errors or after timeoutMs. */
export function httpJson(config: ClientConfig, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<HttpResult> {
  const url = new URL(path, config.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        agent: agentFor(config),
        headers: {
          accept: "application/json",
          ...(payload !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...(config.token !== undefined ? { authorization: `Bearer ${config.token}` } : {}),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          let json: any;
          try {
            json = text === "" ? undefined : JSON.parse(text);
          } catch {
            json = { message: text };
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
    req.on("error", reject);
    req.end(payload);
  });
}

const agents = new WeakMap<ClientConfig, Agent>();
export function agentFor(config: ClientConfig): Agent {
  let agent = agents.get(config);
  if (agent === undefined) {
    agent = new Agent({ keepAlive: true, maxSockets: 64, ca: config.ca, cert: config.cert, key: config.key, rejectUnauthorized: !config.insecureSkipTlsVerify });
    agents.set(config, agent);
  }
  return agent;
}

export const CM_PATH = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/configmaps${name === undefined ? "" : `/${name}`}`;

/**
 * Runs ConfigMap operations against one of several API servers (the first
 * that answers; on a transport error it moves to the next for later calls)
 * and records each in the history.
 */
export class HistoryClient {
  #server = 0;
  constructor(
    readonly name: string,
    readonly servers: ClientConfig[],
    readonly history: History,
    readonly namespace = "default",
    readonly timeoutMs = 5_000,
    first = 0,
  ) {
    this.#server = first;
  }

  async #run(op: Op, method: string, path: string, body?: unknown): Promise<Outcome> {
    const config = this.servers[this.#server % this.servers.length]!;
    let outcome: Outcome;
    try {
      const r = await httpJson(config, method, path, body, this.timeoutMs);
      if (r.status >= 200 && r.status < 300) {
        const obj = r.json;
        outcome = { status: "ok", rv: Number(obj?.metadata?.resourceVersion ?? obj?.details?.resourceVersion ?? 0), value: obj?.data?.v };
      } else if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) {
        outcome = { status: "fail", code: r.status, reason: String(r.json?.reason ?? "") };
      } else {
        outcome = { status: "unknown", error: String(r.status) };
      }
    } catch (err) {
      this.#server++; // fail over for the next call
      const kind = errorKind(err);
      // Refused: the request never reached a server, so it certainly did not take effect.
      outcome = kind === "ECONNREFUSED" ? { status: "fail", code: 0, reason: kind } : { status: "unknown", error: kind };
    }
    this.history.complete(op, outcome);
    return outcome;
  }

  create(key: string, value: string): Promise<Outcome> {
    const op = this.history.invoke(this.name, "create", key, { value });
    return this.#run(op, "POST", CM_PATH(this.namespace), { apiVersion: "v1", kind: "ConfigMap", metadata: { name: key }, data: { v: value } });
  }
  update(key: string, value: string, precondition: number): Promise<Outcome> {
    const op = this.history.invoke(this.name, "update", key, { value, precondition });
    return this.#run(op, "PUT", CM_PATH(this.namespace, key), { apiVersion: "v1", kind: "ConfigMap", metadata: { name: key, resourceVersion: String(precondition) }, data: { v: value } });
  }
  delete(key: string): Promise<Outcome> {
    const op = this.history.invoke(this.name, "delete", key);
    return this.#run(op, "DELETE", CM_PATH(this.namespace, key));
  }
  get(key: string): Promise<Outcome> {
    const op = this.history.invoke(this.name, "get", key);
    return this.#run(op, "GET", CM_PATH(this.namespace, key));
  }
}
