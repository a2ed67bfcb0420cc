// A response body written in chunks with backpressure, gzip-compressed when
// the client accepts gzip and the gate allows it (seed 000, "Media types and
// negotiation" 6). As upstream, the decision waits for the first bytes: a
// body that ends below the threshold goes out plain with a Content-Length.

import { createGzip, type Gzip } from "node:zlib";
import type { ServerResponse } from "node:http";
import type { Outgoing, Incoming } from "./exchange.js";

/** Upstream's threshold: smaller bodies are not worth the CPU. */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** True when the request lists gzip with a non-zero q in Accept-Encoding. */
export function acceptsGzip(req: Incoming): boolean {
  const header = req.headers["accept-encoding"];
  const value = Array.isArray(header) ? header.join(",") : header;
  if (value === undefined) return false;
  for (const part of value.split(",")) {
    const [coding, ...params] = part.split(";");
    if (coding?.trim().toLowerCase() !== "gzip") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

export interface ResponseBodyOptions {
  status: number;
  headers: Record<string, string | number>;
  /** Compress when the body reaches the threshold (gate on and the client accepts gzip). */
  gzip: boolean;
  thresholdBytes?: number;
}

export class ResponseBody {
  readonly #res: Outgoing;
  readonly #options: ResponseBodyOptions;
  #held: Buffer[] = [];
  #heldBytes = 0;
  #started = false;
  #gzip: Gzip | undefined;

  constructor(res: Outgoing, options: ResponseBodyOptions) {
    this.#res = res;
    this.#options = options;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (!this.#started && this.#options.gzip) {
      this.#held.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      this.#heldBytes += chunk.length;
      if (this.#heldBytes < (this.#options.thresholdBytes ?? GZIP_THRESHOLD_BYTES)) return;
      this.#start(true);
      const held = Buffer.concat(this.#held);
      this.#held = [];
      return this.#send(held);
    }
    if (!this.#started) this.#start(false);
    return this.#send(chunk);
  }

  /** The last chunk (if any); a body that never started goes out whole with its length. */
  async end(chunk?: Uint8Array): Promise<void> {
    if (!this.#started) {
      const parts = chunk === undefined ? this.#held : [...this.#held, chunk];
      const size = this.#heldBytes + (chunk?.length ?? 0);
      if (this.#options.gzip && size >= (this.#options.thresholdBytes ?? GZIP_THRESHOLD_BYTES)) {
        this.#start(true);
        this.#gzip!.end(Buffer.concat(parts));
        return;
      }
      const res = this.#res;
      res.writeHead(this.#options.status, { ...this.#options.headers, "content-length": size });
      (res as ServerResponse).end(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
      return;
    }
    if (this.#gzip !== undefined) {
      if (chunk !== undefined) await this.#send(chunk);
      this.#gzip.end();
      return;
    }
    if (chunk === undefined) this.#res.end();
    else (this.#res as ServerResponse).end(chunk);
  }

  #start(gzip: boolean): void {
    this.#started = true;
    const headers = { ...this.#options.headers };
    if (gzip) {
      headers["content-encoding"] = "gzip";
      headers["vary"] = "Accept-Encoding";
    }
    this.#res.writeHead(this.#options.status, headers);
    if (gzip) {
      // Level 1, as upstream: most of the size win for a fraction of the CPU.
      this.#gzip = createGzip({ level: 1 });
      this.#gzip.pipe(this.#res as ServerResponse);
    }
  }

  #send(chunk: Uint8Array): Promise<void> {
    const sink = (this.#gzip ?? this.#res) as ServerResponse | Gzip;
    const res = this.#res;
    if (res.destroyed) return Promise.reject(new Error("the client went away"));
    return new Promise((resolve, reject) => {
      const ok = sink.write(chunk, (err?: Error | null) => (err ? reject(err) : undefined));
      if (ok) return resolve();
      // A client that leaves mid-list never drains: stop writing instead of waiting forever.
      const done = () => {
        sink.off("drain", done);
        res.off("close", done);
        if (res.destroyed && !res.writableFinished) reject(new Error("the client went away"));
        else resolve();
      };
      sink.once("drain", done);
      res.once("close", done);
    });
  }
}
