// The proxy's fallback data plane for a machine without iptables: a userspace
// proxy. Each service's cluster IP is added to a dummy interface of ours (so
// the host and its pods deliver to it locally; an empty bridge where the
// kernel has no dummy devices), and for each service port a
// socket listens on clusterIP:port (and on every address at its node port)
// and relays to one of the port's ready endpoints, chosen in turn. TCP
// connections are piped; UDP datagrams go through a per-client socket to the
// endpoint (answers come back from the service address), forgotten after a
// minute idle. It needs only iproute2 (`ip`), which the pod network needs too.
// Session affinity (`sessionAffinity: ClientIP`): a table per service port,
// shared by its cluster IP and node port listeners, keeps each client
// address's endpoint; a client seen again within the timeout gets the same
// endpoint (each connection restarts its clock), an older entry is dropped.

import { execFile } from "node:child_process";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { existsSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";
import { proxiedPorts } from "./rules.js";

const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].find(existsSync);
/** How long a UDP client's relay socket lives without traffic. */
const UDP_IDLE_MS = 60_000;

/** One service port to serve: where it listens and where it relays. */
export interface Portal {
  /** Key: protocol/address:port. */
  key: string;
  protocol: "tcp" | "udp";
  /** The cluster IP, or 0.0.0.0 for a node port. */
  address: string;
  port: number;
  /** Ready endpoints as ip:port. */
  endpoints: string[];
  /** namespace/name:port, for the log. */
  id: string;
  /** The service port (namespace/name:port/protocol): the cluster IP's and node port's portals share its affinity table. */
  service: string;
  /** ClientIP session affinity timeout in seconds, or undefined for none. */
  affinitySeconds: number | undefined;
}

/** The portals of the services (pure, tested as data): one per cluster IP port and one per node port. */
export function portalsOf(services: readonly Service[], slicesOf: (namespace: string, name: string) => EndpointSlice[]): Portal[] {
  const out: Portal[] = [];
  for (const { ns, name, ip, port, proto, endpoints, affinitySeconds } of proxiedPorts(services, slicesOf)) {
    const protocol = proto as "tcp" | "udp";
    const id = `${ns}/${name}:${port.name ?? port.port}`;
    const service = `${ns}/${name}:${port.name ?? ""}/${protocol}`;
    out.push({ key: `${protocol}/${ip}:${port.port}`, protocol, address: ip, port: port.port, endpoints, id, service, affinitySeconds });
    if (port.nodePort) out.push({ key: `${protocol}/0.0.0.0:${port.nodePort}`, protocol, address: "0.0.0.0", port: port.nodePort, endpoints, id: `${id} (node port)`, service, affinitySeconds });
  }
  return out;
}

function ip(args: string[]): Promise<string> {
  if (IP === undefined) return Promise.reject(Object.assign(new Error("ip (iproute2) not found"), { code: "ENOENT" }));
  return new Promise((resolve, reject) => {
    execFile(IP, args, { encoding: "utf8" }, (err, stdout, stderr) => (err ? reject(new Error(`ip ${args.join(" ")}: ${stderr.trim() || err.message}`)) : resolve(stdout)));
  });
}

/**
 * ClientIP affinity of one service port: the endpoint each client address
 * last had and when. pick() answers the remembered endpoint while it is
 * within the timeout and still ready, else asks `choose` and remembers that.
 */
export class AffinityTable {
  readonly #entries = new Map<string, { endpoint: string; seen: number }>();
  #lastSweep = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.#entries.size;
  }

  pick(client: string, timeoutSeconds: number, endpoints: readonly string[], choose: () => string | undefined): string | undefined {
    const now = this.now();
    const ttl = timeoutSeconds * 1000;
    // Expired entries go once per timeout, so the table does not grow with every client ever seen.
    if (now - this.#lastSweep >= ttl) {
      for (const [c, e] of this.#entries) if (now - e.seen > ttl) this.#entries.delete(c);
      this.#lastSweep = now;
    }
    const held = this.#entries.get(client);
    const endpoint = held !== undefined && now - held.seen <= ttl && endpoints.includes(held.endpoint) ? held.endpoint : choose();
    if (endpoint === undefined) this.#entries.delete(client);
    else this.#entries.set(client, { endpoint, seen: now });
    return endpoint;
  }
}

/** "::ffff:10.0.0.1" → "10.0.0.1": one client, one key. */
const clientAddress = (a: string | undefined) => (a ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");

const split = (ep: string) => ({ host: ep.slice(0, ep.lastIndexOf(":")), port: Number(ep.slice(ep.lastIndexOf(":") + 1)) });

/** A listening portal: the endpoints are swapped in place on each sync. */
interface Listener {
  portal: Portal;
  next: number;
  close(): void;
}

export class UserspaceProxy {
  /** The dummy interface that holds the cluster IPs. */
  readonly device: string;
  readonly #log: (line: string) => void;
  readonly #listeners = new Map<string, Listener>();
  /** Affinity tables by service port (Portal.service). */
  readonly #affinity = new Map<string, AffinityTable>();
  /** Portals whose listen failed, logged once per message. */
  readonly #failed = new Map<string, string>();
  #deviceUp: Promise<void> | undefined;

  constructor(device: string, log: (line: string) => void) {
    this.device = device;
    this.#log = log;
  }

  /** Makes the listeners match the portals; returns how many listen. */
  async sync(portals: readonly Portal[]): Promise<number> {
    await (this.#deviceUp ??= this.#ensureDevice().catch((err: unknown) => {
      this.#deviceUp = undefined;
      throw err;
    }));
    const wanted = new Map(portals.map((p) => [p.key, p]));
    for (const [key, l] of this.#listeners) {
      if (!wanted.has(key)) {
        l.close();
        this.#listeners.delete(key);
      }
    }
    // Turning affinity off (or removing the service) forgets its clients; turning it on starts afresh.
    const sticky = new Set(portals.filter((p) => p.affinitySeconds !== undefined).map((p) => p.service));
    for (const service of this.#affinity.keys()) if (!sticky.has(service)) this.#affinity.delete(service);
    // The cluster IPs on our device: the wanted ones added, the others removed.
    const addresses = new Set(portals.filter((p) => p.address !== "0.0.0.0").map((p) => p.address));
    const present = await this.addresses();
    for (const a of addresses) if (!present.has(a)) await ip(["addr", "add", `${a}/32`, "dev", this.device]);
    for (const a of present) if (!addresses.has(a)) await ip(["addr", "del", `${a}/32`, "dev", this.device]).catch(() => {});
    for (const p of portals) {
      const l = this.#listeners.get(p.key);
      if (l !== undefined) {
        l.portal = p;
        continue;
      }
      try {
        this.#listeners.set(p.key, await (p.protocol === "tcp" ? this.#tcp(p) : this.#udp(p)));
        this.#failed.delete(p.key);
      } catch (err) {
        const message = (err as Error).message;
        if (this.#failed.get(p.key) !== message) this.#log(`orch-proxy: cannot serve ${p.id} at ${p.address}:${p.port}/${p.protocol}: ${message}`);
        this.#failed.set(p.key, message);
      }
    }
    return this.#listeners.size;
  }

  /** The IPv4 addresses on our device. */
  async addresses(): Promise<Set<string>> {
    const out = await ip(["-4", "-o", "addr", "show", "dev", this.device]);
    return new Set([...out.matchAll(/inet ([0-9.]+)\//g)].map((m) => m[1]!));
  }

  /** Stops every listener and removes the device (with its addresses). */
  async close(): Promise<void> {
    for (const l of this.#listeners.values()) l.close();
    this.#listeners.clear();
    await ip(["link", "del", this.device]).catch(() => {});
    this.#deviceUp = undefined;
  }

  async #ensureDevice(): Promise<void> {
    const exists = await ip(["link", "show", this.device]).then(() => true, () => false);
    // A dummy device where the kernel has the module; else an empty bridge (always built in where pods run):
    // either way its addresses are local to the host, and nothing else uses it.
    if (!exists) await ip(["link", "add", this.device, "type", "dummy"]).catch(() => ip(["link", "add", this.device, "type", "bridge"]));
    await ip(["link", "set", this.device, "up"]);
  }

  /** The endpoint for a new connection (or UDP client) from `client`: its affine one, else the next in turn. */
  #pick(l: Listener, client: string | undefined): string | undefined {
    const { endpoints: eps, affinitySeconds, service } = l.portal;
    if (eps.length === 0) return undefined;
    const next = () => eps[l.next++ % eps.length];
    if (affinitySeconds === undefined || client === undefined) return next();
    let table = this.#affinity.get(service);
    if (table === undefined) this.#affinity.set(service, (table = new AffinityTable()));
    return table.pick(clientAddress(client), affinitySeconds, eps, next);
  }

  /** Resolves to the listener once its socket listens; a later error is logged, not thrown. */
  #started(socket: Server | UdpSocket, listen: (up: () => void) => void, l: Listener): Promise<Listener> {
    return new Promise((resolve, reject) => {
      socket.once("error", reject);
      listen(() => {
        socket.off("error", reject);
        socket.on("error", (err: Error) => this.#log(`orch-proxy: ${l.portal.id}: ${err.message}`));
        resolve(l);
      });
    });
  }

  #tcp(portal: Portal): Promise<Listener> {
    const sockets = new Set<Socket>();
    const server: Server = createServer((client) => {
      const ep = this.#pick(l, client.remoteAddress);
      // No ready endpoint: refused at once (a reset), as the iptables mode's REJECT.
      if (ep === undefined) return void client.resetAndDestroy();
      const upstream = connect(split(ep));
      sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", () => client.resetAndDestroy()).on("close", drop);
      client.pipe(upstream).pipe(client);
    });
    const l: Listener = {
      portal,
      next: 0,
      close: () => {
        server.close();
        for (const s of sockets) s.destroy();
      },
    };
    return this.#started(server, (up) => server.listen({ host: portal.address, port: portal.port, exclusive: true }, up), l);
  }

  #udp(portal: Portal): Promise<Listener> {
    const socket = createSocket({ type: "udp4" });
    const clients = new Map<string, { relay: UdpSocket; timer: NodeJS.Timeout; host: string; port: number }>();
    const forget = (key: string) => {
      const c = clients.get(key);
      if (c === undefined) return;
      clearTimeout(c.timer);
      c.relay.close();
      clients.delete(key);
    };
    socket.on("message", (msg, from) => {
      const key = `${from.address}:${from.port}`;
      let c = clients.get(key);
      if (c === undefined) {
        const ep = this.#pick(l, from.address);
        if (ep === undefined) return;
        const relay = createSocket({ type: "udp4" });
        const entry = { relay, timer: setTimeout(() => forget(key), UDP_IDLE_MS).unref(), ...split(ep) };
        relay.on("message", (answer) => {
          socket.send(answer, from.port, from.address);
          entry.timer.refresh();
        });
        relay.on("error", () => forget(key));
        clients.set(key, (c = entry));
      }
      c.timer.refresh();
      c.relay.send(msg, c.port, c.host);
    });
    const l: Listener = {
      portal,
      next: 0,
      close: () => {
        for (const key of [...clients.keys()]) forget(key);
        socket.close();
      },
    };
    return this.#started(socket, (up) => socket.bind({ address: portal.address, port: portal.port, exclusive: true }, up), l);
  }
}
