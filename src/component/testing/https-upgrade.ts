// A test client for Upgrade requests on component ports: one HTTPS request
// with Connection: Upgrade; resolves with the switched socket on a 101, or
// with the status and body of a refusal.

import { request } from "node:https";
import type { Duplex } from "node:stream";

export interface HttpsUpgradeResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The refusal's body ("" after a 101). */
  readonly body: string;
  /** The connection after a 101; the caller ends it. */
  readonly socket?: Duplex;
}

export function httpsUpgrade(url: string, options: { protocol: string; method?: string; clientCert?: { cert: string; key: string } }): Promise<HttpsUpgradeResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? "GET",
      headers: { connection: "Upgrade", upgrade: options.protocol },
      rejectUnauthorized: false,
      agent: false,
      ...(options.clientCert ?? {}),
    });
    req.on("upgrade", (res, socket) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "", socket }));
    req.on("response", (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
