// One AdmissionReview round trip: POST over HTTPS to the webhook's URL or to
// its Service (resolved to an endpoint's pod IP and port, else the cluster IP,
// with the TLS name `<service>.<namespace>.svc`), trusting the caBundle, with
// the webhook's timeout.

import { request } from "node:https";
import type { WebhookClientConfig } from "../../../api/admissionregistration/index.js";

/** Where a Service reference leads: a host and port to dial. */
export type ServiceResolver = (namespace: string, name: string, port: number) => Promise<{ host: string; port: number }>;

/** The call failed (unreachable, TLS, timeout, bad status): subject to the failure policy. */
export class CallError extends Error {}

export async function postReview(config: WebhookClientConfig, body: unknown, timeoutSeconds: number, resolve: ServiceResolver): Promise<unknown> {
  let target: URL;
  let dial: { host: string; port: number } | undefined;
  let servername: string | undefined;
  if (config.url !== undefined) {
    target = new URL(config.url);
  } else {
    const svc = config.service ?? {};
    const port = svc.port ?? 443;
    servername = `${svc.name}.${svc.namespace}.svc`;
    target = new URL(`https://${servername}:${port}${svc.path ?? ""}`);
    try {
      dial = await resolve(svc.namespace ?? "", svc.name ?? "", port);
    } catch (err) {
      throw new CallError(`failed to call webhook: ${(err as Error).message}`);
    }
  }
  target.searchParams.set("timeout", `${timeoutSeconds}s`);
  const where = `Post "${target.href}"`;
  const ca = config.caBundle ? Buffer.from(config.caBundle, "base64").toString("utf8") : undefined;
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((done, fail) => {
    const req = request(
      {
        host: dial?.host ?? target.hostname.replace(/^\[|\]$/g, ""),
        port: dial?.port ?? (target.port === "" ? 443 : Number(target.port)),
        path: target.pathname + target.search,
        method: "POST",
        ...(ca !== undefined ? { ca } : {}),
        servername: servername ?? (/^[\d.]+$|:/.test(target.hostname) ? undefined : target.hostname),
        headers: { "Content-Type": "application/json", Accept: "application/json", "Content-Length": payload.length },
        agent: false,
        timeout: timeoutSeconds * 1000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > 3 * 1024 * 1024) req.destroy(new Error("response body too large"));
          else chunks.push(c);
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) {
            fail(new CallError(`failed to call webhook: the server responded with the status code ${res.statusCode} but did not return more information`));
            return;
          }
          try {
            done(JSON.parse(text));
          } catch (err) {
            fail(new CallError(`received invalid webhook response: ${(err as Error).message}`));
          }
        });
        res.on("error", (err) => fail(new CallError(`failed to call webhook: ${where}: ${err.message}`)));
      },
    );
    const timer = setTimeout(() => req.destroy(new Error("context deadline exceeded")), timeoutSeconds * 1000);
    req.on("timeout", () => req.destroy(new Error("context deadline exceeded")));
    req.on("error", (err) => fail(new CallError(`failed to call webhook: ${where}: ${err.message}`)));
    req.on("close", () => clearTimeout(timer));
    req.end(payload);
  });
}
