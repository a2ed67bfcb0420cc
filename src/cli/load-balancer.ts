// The client-side load balancer of a joined node agent (as k3s's agents
// have): a TCP listener on loopback that passes each connection through to
// one of the cluster's API servers. TLS goes end to end (every server's
// certificate, issued from the cluster CA, names 127.0.0.1), so the agent's
// client simply points at https://127.0.0.1:PORT. A server that refuses or
// does not answer within the dial timeout is skipped and the next one tried;
// connections it held break, and the client's reconnects land on the next
// server. The list starts with the --join URL and is refreshed from the
// ConfigMap the control-plane servers publish (control-plane.ts).

import { connect, createServer, type Server, type Socket } from "node:net";

export interface LoadBalancerOptions {
  /** https://host:port URLs of the API servers, the preferred one first. */
  servers: string[];
  /** How long a connect may take before the next server is tried (default 2 s). */
  dialTimeoutMs?: number;
  log: (line: string) => void;
}

export class LoadBalancer {
  readonly #options: LoadBalancerOptions;
  #servers: { host: string; port: number; url: string }[];
  #current = 0;
  #server: Server | undefined;
  #sockets = new Set<Socket>();
  #port = 0;

  constructor(options: LoadBalancerOptions) {
    this.#options = options;
    this.#servers = parse(options.servers);
    if (this.#servers.length === 0) throw new Error("load balancer: no API server to balance");
  }

  /** https://127.0.0.1:PORT once listening. */
  get url(): string {
    return `https://127.0.0.1:${this.#port}`;
  }

  /** The server new connections go to now. */
  get current(): string {
    return this.#servers[this.#current]!.url;
  }

  get servers(): string[] {
    return this.#servers.map((s) => s.url);
  }

  /** Replaces the list (the current server stays current when it is still listed). */
  setServers(urls: string[]): void {
    const next = parse(urls);
    if (next.length === 0) return;
    const current = this.current;
    const same = next.length === this.#servers.length && next.every((s, i) => s.url === this.#servers[i]!.url);
    if (same) return;
    this.#servers = next;
    this.#current = Math.max(0, next.findIndex((s) => s.url === current));
    this.#options.log(`load balancer: API servers ${this.servers.join(", ")}`);
  }

  async listen(): Promise<void> {
    const server = createServer((client) => this.#accept(client));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.#port = (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server === undefined ? resolve() : this.#server.close(() => resolve())));
  }

  #accept(client: Socket): void {
    this.#sockets.add(client);
    client.once("close", () => this.#sockets.delete(client));
    client.on("error", () => client.destroy());
    client.pause();
    void this.#dial().then((upstream) => {
      if (upstream === undefined || client.destroyed) {
        upstream?.destroy();
        client.destroy();
        return;
      }
      this.#sockets.add(upstream);
      upstream.once("close", () => {
        this.#sockets.delete(upstream);
        client.destroy();
      });
      client.once("close", () => upstream.destroy());
      upstream.on("error", () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  /** A connection to the current server, moving on to the next ones on failure; undefined when none answers. */
  async #dial(): Promise<Socket | undefined> {
    for (let tried = 0; tried < this.#servers.length; tried++) {
      const index = this.#current;
      const target = this.#servers[index]!;
      const socket = await tryConnect(target.host, target.port, this.#options.dialTimeoutMs ?? 2000);
      if (socket !== undefined) return socket;
      if (this.#current === index && this.#servers.length > 1) {
        this.#current = (index + 1) % this.#servers.length;
        this.#options.log(`load balancer: ${target.url} does not answer; switching to ${this.current}`);
      }
    }
    return undefined;
  }
}

function tryConnect(host: string, port: number, timeoutMs: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const fail = () => {
      socket.destroy();
      resolve(undefined);
    };
    socket.setTimeout(timeoutMs, fail);
    socket.once("error", fail);
    socket.once("connect", () => {
      socket.setTimeout(0);
      socket.removeListener("error", fail);
      resolve(socket);
    });
  });
}

function parse(urls: string[]): { host: string; port: number; url: string }[] {
  const out: { host: string; port: number; url: string }[] = [];
  for (const url of urls) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      continue;
    }
    if (u.protocol !== "https:") continue;
    const entry = { host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 443), url: `https://${u.host}` };
    if (!out.some((o) => o.url === entry.url)) out.push(entry);
  }
  return out;
}
