// A plain-HTTP GET of `/` for end-to-end tests that reach pods and services:
// the body, trimmed. A new connection each time (no keep-alive), so a
// service's proxy picks a backend per request.

import { request } from "node:http";

export function getText(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: "/", timeout: 2000, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve(body.trim()));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}
