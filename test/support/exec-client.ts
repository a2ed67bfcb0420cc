// A channel.k8s.io WebSocket client for tests that talk to a node agent's
// /exec directly (as the API server's proxy does): sends stdin and its v5 close,
// collects stdout, stderr and the status on channel 3.

import { WebSocket } from "ws";

export interface ExecResult {
  /** The HTTP status when the upgrade was refused. */
  refused?: { status: number; body: string };
  stdout: string;
  stderr: string;
  /** The Status JSON from channel 3. */
  status?: { status?: string; reason?: string; details?: { causes?: { reason?: string; message?: string }[] } };
}

export interface ExecClientOptions {
  cert?: string;
  key?: string;
  /** e.g. the API server's `authorization`. */
  headers?: Record<string, string>;
  stdin?: string;
  protocol?: string;
  /** Count stdout bytes instead of keeping them (throughput runs). */
  countOnly?: boolean;
}

export function agentExec(url: string, options: ExecClientOptions = {}): Promise<ExecResult & { stdoutBytes: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, [options.protocol ?? "v5.channel.k8s.io"], {
      rejectUnauthorized: false,
      ...(options.cert !== undefined ? { cert: options.cert, key: options.key } : {}),
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
    });
    const result: ExecResult & { stdoutBytes: number } = { stdout: "", stderr: "", stdoutBytes: 0 };
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ ...result, refused: { status: res.statusCode ?? 0, body } }));
    });
    ws.on("open", () => {
      if (options.stdin === undefined) return;
      ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(options.stdin)]));
      ws.send(Buffer.from([255, 0]));
    });
    ws.on("message", (d: Buffer) => {
      const text = d[0] === 1 && options.countOnly ? "" : d.subarray(1).toString();
      if (d[0] === 1) {
        result.stdoutBytes += d.length - 1;
        if (!options.countOnly) result.stdout += text;
      }
      else if (d[0] === 2) result.stderr += text;
      else if (d[0] === 3 && text !== "") result.status = JSON.parse(text) as ExecResult["status"];
    });
    ws.on("close", () => resolve(result));
    ws.on("error", () => {});
  });
}
