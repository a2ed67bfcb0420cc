// Test data for custom resources: a CronTab definition (upstream's example,
// with status and scale subresources, printer columns and a schema that
// exercises validation, defaults and pruning), and a two-version kind with
// its HTTPS conversion webhook.

import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedServingCert } from "../../component/pki.js";

/** Poll `fn` every 20 ms until it gives a value (a definition is served asynchronously). */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 1000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function cronTabCrd(extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "crontabs.stable.example.com" },
    spec: {
      group: "stable.example.com",
      scope: "Namespaced",
      names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"], categories: ["all"] },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.selector" } },
          additionalPrinterColumns: [
            { name: "Spec", type: "string", jsonPath: ".spec.cronSpec" },
            { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  required: ["cronSpec"],
                  properties: {
                    cronSpec: { type: "string", pattern: "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$" },
                    image: { type: "string", maxLength: 20 },
                    replicas: { type: "integer", minimum: 1, maximum: 10, default: 1 },
                    mode: { type: "string", enum: ["fast", "slow"], default: "slow" },
                    port: { "x-kubernetes-int-or-string": true },
                    extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                  },
                },
                status: { type: "object", properties: { replicas: { type: "integer" }, selector: { type: "string" } } },
              },
            },
          },
        },
      ],
    },
    ...extra,
  };
}


// ---- a conversion webhook across two versions (tests and e2e) ----


/**
 * A two-version kind, Endpoint (group conv.example.com): v1 stores
 * `spec.host` and `spec.port`, v2 has `spec.hostPort: "host:port"` and a
 * default `spec.protocol` only v2 knows. Storage is v1; conversion is the
 * webhook at `url` (or None).
 */
export function endpointCrd(conversion: Record<string, unknown>, group = "conv.example.com", apiextensions = "apiextensions.orch.io/v1") {
  return {
    apiVersion: apiextensions,
    kind: "CustomResourceDefinition",
    metadata: { name: `endpoints.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "endpoints", singular: "endpoint", kind: "Endpoint" },
      conversion,
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          additionalPrinterColumns: [{ name: "Host", type: "string", jsonPath: ".spec.host" }],
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", required: ["host"], properties: { host: { type: "string" }, port: { type: "integer", minimum: 1, maximum: 65535 } } },
              },
            },
          },
        },
        {
          name: "v2",
          served: true,
          storage: false,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  required: ["hostPort"],
                  properties: {
                    hostPort: { type: "string", pattern: "^[a-z0-9.-]+:[0-9]+$" },
                    protocol: { type: "string", enum: ["TCP", "UDP"], default: "TCP" },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** v1 ⇄ v2 of endpointCrd's kind, as its webhook converts. */
export function convertEndpoint(obj: any, desired: string): any {
  const out = structuredClone(obj);
  out.apiVersion = desired;
  const spec = obj.spec ?? {};
  if (desired.endsWith("/v2")) out.spec = { hostPort: `${spec.host}:${spec.port ?? 80}`, ...(spec.protocol ? { protocol: spec.protocol } : {}) };
  else {
    const [host, port] = String(spec.hostPort ?? ":").split(":");
    out.spec = { host, port: Number(port) };
  }
  return out;
}

export interface ConversionWebhook {
  readonly url: string;
  readonly caBundle: string;
  /** Every ConversionReview received. */
  readonly reviews: any[];
  /** How the next answers go: converted objects, a Failure result, a wrong uid, or HTTP 500. */
  mode: "ok" | "fail" | "wrong-uid" | "http-500" | "rename";
  close(): Promise<void>;
}

/** An HTTPS conversion webhook on 127.0.0.1 (path /convert), answering in the review's own version; AdmissionReviews are allowed. */
export async function startConversionWebhook(): Promise<ConversionWebhook> {
  const pki = await selfSignedServingCert();
  const reviews: any[] = [];
  const hook: ConversionWebhook = {
    url: "",
    caBundle: Buffer.from(pki.ca).toString("base64"),
    reviews,
    mode: "ok",
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server: Server = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      reviews.push(review);
      if (review.kind === "AdmissionReview") {
        // Also an admission webhook that allows everything (tests look at what it was sent).
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: "AdmissionReview", response: { uid: review.request.uid, allowed: true } }));
        return;
      }
      if (hook.mode === "http-500") {
        res.writeHead(500).end("boom");
        return;
      }
      const { uid, desiredAPIVersion, objects } = review.request;
      const response =
        hook.mode === "fail"
          ? { uid, result: { status: "Failure", message: "the converter refuses" } }
          : {
              uid: hook.mode === "wrong-uid" ? "nope" : uid,
              result: { status: "Success" },
              convertedObjects: objects.map((o: any) => {
                const out = convertEndpoint(o, desiredAPIVersion);
                if (hook.mode === "rename") out.metadata.name = "renamed";
                return out;
              }),
            };
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: "ConversionReview", response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  (hook as { url: string }).url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/convert`;
  return hook;
}
