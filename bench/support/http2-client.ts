// A benchmark client for a real `orch apiserver`: one HTTP/2 session over
// TLS with the admin token from its kubeconfig (as kubectl and client-go talk
// to it), plus the closed-loop driver and small helpers the API benchmarks share.

import { connect, type ClientHttp2Session } from "node:http2";
import { readFileSync } from "node:fs";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import type { OrchProcess } from "../../test/support/orch-process.js";

export interface BenchClient {
  /** `body`: an object (sent as JSON) or the raw text; `contentType` defaults to JSON. */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: Buffer }>;
  session: ClientHttp2Session;
  token: string;
  close(): void;
}

/** `identity`: a client certificate to present instead of the admin token (a user RBAC authorizes). */
export function benchClient(orch: OrchProcess, identity?: { cert: string; key: string }): BenchClient {
  const config = readFileSync(orch.kubeconfig, "utf8");
  const token = /token: (\S+)/.exec(config)![1]!;
  const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(config)![1]!, "base64");
  // Like Go's HTTP/2 client (kubectl, client-go): large flow-control windows and no Nagle delay.
  const session = connect(orch.url, {
    ca,
    settings: { initialWindowSize: 4 << 20 },
    createConnection: (url) => tlsConnect({ host: url.hostname, port: Number(url.port), ca, ALPNProtocols: ["h2"], noDelay: true, ...identity } as ConnectionOptions),
  });
  session.on("connect", () => session.setLocalWindowSize(16 << 20));
  session.setMaxListeners(0);
  return {
    session,
    token,
    request(method, path, body, contentType = "application/json") {
      return new Promise((resolve, reject) => {
        const headers: Record<string, string> = { ":method": method, ":path": path, ...(identity === undefined ? { authorization: `Bearer ${token}` } : {}) };
        if (body !== undefined) headers["content-type"] = contentType;
        const stream = session.request(headers);
        const chunks: Buffer[] = [];
        let status = 0;
        stream.on("response", (h) => (status = Number(h[":status"])));
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => resolve({ status, body: Buffer.concat(chunks) }));
        stream.on("error", reject);
        stream.end(body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body));
      });
    },
    close: () => session.close(),
  };
}

/** `concurrency` workers call `op` back to back for `ms`; returns completed ops per second. `op` gets (op number, worker). */
export async function closedLoop(concurrency: number, ms: number, op: (i: number, worker: number) => Promise<void>): Promise<number> {
  let n = 0;
  const deadline = performance.now() + ms;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) await op(n++, worker);
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

/** The body of an answer with the `want` status; otherwise throws naming `what`, the status and the body's start. */
export function expectStatus(r: { status: number; body: Buffer }, want: number, what: string): Buffer {
  if (r.status !== want) throw new Error(`${what}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  return r.body;
}

export async function ensureNamespace(c: BenchClient, name: string): Promise<void> {
  await c.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
}

/** `count` bench pods `<prefix>-<i>` in `ns`, 64 creates in flight. */
export async function fillPods(c: BenchClient, ns: string, count: number, prefix: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < count) {
        const i = next++;
        const r = await c.request("POST", `/api/v1/namespaces/${ns}/pods`, benchPod(`${prefix}-${i}`, i));
        if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body.toString().slice(0, 200)}`);
      }
    }),
  );
}

/** The bench pod with `metadata.generateName` instead of a name: one body for every create of a load (the server names each). */
export function generatedPod(prefix: string): object {
  const p = benchPod("", 0) as { metadata: Record<string, unknown> };
  delete p.metadata["name"];
  p.metadata["generateName"] = prefix;
  return p;
}

/** A pod of about 3 KB (a long annotation, ten env vars, ports, resources), the API benchmarks' unit. */
export function benchPod(name: string, i: number): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: Record<string, unknown>;
} {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: "bench", shard: String(i % 10) }, annotations: { note: "x".repeat(1500) } },
    spec: {
      containers: [
        {
          name: "main",
          image: "registry.local/bench:1.0",
          command: ["/bin/sh", "-c", "sleep 3600"],
          env: Array.from({ length: 10 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${k}-${"y".repeat(20)}` })),
          ports: [{ containerPort: 8080, name: "http" }],
          resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "256Mi" } },
        },
      ],
    },
  };
}
