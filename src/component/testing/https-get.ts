// A test client for component endpoints: one HTTPS GET trusting a given CA (or
// nothing: components often serve self-signed certificates), with optional
// bearer token or client certificate; returns status, headers and body bytes.

import { request } from "node:https";

export interface HttpsGetOptions {
  readonly headers?: Record<string, string>;
  readonly token?: string;
  readonly clientCert?: { readonly cert: string; readonly key: string };
  /** PEM to trust; without it the server certificate is not verified. */
  readonly ca?: string;
  /** Default GET. */
  readonly method?: string;
}

export interface HttpsGetResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  readonly text: string;
}

export function httpsGet(url: string, options: HttpsGetOptions = {}): Promise<HttpsGetResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? "GET",
      headers: { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers },
      ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
      ...(options.clientCert ? { cert: options.clientCert.cert, key: options.clientCert.key } : {}),
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString("utf8") });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
