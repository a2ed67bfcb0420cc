// The cluster DNS server of `orch server` (what CoreDNS does for upstream
// clusters): UDP and TCP on one address and port; names under the cluster
// domain are answered from the cluster (records.ts, TTL 5 s, NXDOMAIN when
// unknown); other names are forwarded as they are to the host's resolvers.
// Only clients `allowed` says are ours (pods, nodes, this host) get answers:
// it never becomes an open resolver on the node's network.

import { createSocket, type Socket } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import * as dnsPacket from "dns-packet";
import { lookup, type ClusterView } from "./records.js";

const TTL_S = 5;
const FORWARD_TIMEOUT_MS = 2_000;
const QR_AA = 1 << 10;
const RD = 1 << 8;
const RA = 1 << 7;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5, FORMERR: 1 } as const;

export interface DnsServerOptions {
  address: string;
  /** 0 picks a free port (the same for UDP and TCP). */
  port: number;
  domain: string;
  view: ClusterView;
  allowed(ip: string): boolean;
  /** Resolvers for other names, "IP" or "IP:PORT" (default: the host's /etc/resolv.conf nameservers). */
  upstreams?: string[];
  log?: (line: string) => void;
}

export interface DnsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** The nameservers of a resolv.conf. */
export function hostResolvers(path = "/etc/resolv.conf"): string[] {
  try {
    return readFileSync(path, "utf8").split("\n").map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1]).filter((s): s is string => s !== undefined);
  } catch {
    return [];
  }
}

function reply(query: dnsPacket.Packet, rcode: number, aa: boolean, answers: dnsPacket.Answer[]): Buffer {
  const rd = (query.flags ?? 0) & RD;
  return dnsPacket.encode({ type: "response", id: query.id ?? 0, flags: (aa ? QR_AA : 0) | rd | RA | rcode, questions: query.questions ?? [], answers });
}

/** "IP", "IPv4:PORT" or "[IPv6]:PORT" (port 53 when none). */
function resolverAddress(text: string): { host: string; port: number } {
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2]) };
  const v4 = /^([\d.]+):(\d+)$/.exec(text);
  if (v4) return { host: v4[1]!, port: Number(v4[2]) };
  return { host: text, port: 53 };
}

function forward(raw: Buffer, upstreams: readonly string[]): Promise<Buffer | undefined> {
  if (upstreams[0] === undefined) return Promise.resolve(undefined);
  const server = resolverAddress(upstreams[0]);
  return new Promise((resolve) => {
    const sock = createSocket(server.host.includes(":") ? "udp6" : "udp4");
    const done = (b: Buffer | undefined) => {
      clearTimeout(timer);
      sock.close();
      resolve(b);
    };
    const timer = setTimeout(() => done(undefined), FORWARD_TIMEOUT_MS);
    sock.on("message", (msg) => done(msg));
    sock.on("error", () => done(undefined));
    sock.send(raw, server.port, server.host);
  });
}

export async function startDnsServer(o: DnsServerOptions): Promise<DnsServer> {
  const upstreams = o.upstreams ?? hostResolvers();
  const answer = async (raw: Buffer, client: string): Promise<Buffer | undefined> => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(raw);
    } catch {
      return undefined; // not DNS: no answer, as resolvers do with garbage
    }
    if (!o.allowed(client)) return reply(query, RCODE.REFUSED, false, []);
    const q = query.questions?.[0];
    if (q === undefined) return reply(query, RCODE.FORMERR, false, []);
    const found = lookup(o.view, o.domain, q.name, q.type);
    if (!found.authoritative) return (await forward(raw, upstreams)) ?? reply(query, RCODE.SERVFAIL, false, []);
    const answers: dnsPacket.Answer[] = found.answers.map((a) =>
      a.type === "A"
        ? { type: "A", name: a.name, ttl: TTL_S, class: "IN", data: a.address }
        : a.type === "CNAME"
          ? { type: "CNAME", name: a.name, ttl: TTL_S, class: "IN", data: a.target }
          : { type: "SRV", name: a.name, ttl: TTL_S, class: "IN", data: { priority: 0, weight: 100, port: a.port, target: a.target } },
    );
    return reply(query, found.exists || answers.length > 0 ? RCODE.NOERROR : RCODE.NXDOMAIN, true, answers);
  };

  const udp: Socket = createSocket(o.address.includes(":") ? "udp6" : "udp4");
  udp.on("message", (msg, rinfo) => {
    void answer(msg, rinfo.address).then((out) => out && udp.send(out, rinfo.port, rinfo.address)).catch((err: Error) => o.log?.(`dns: ${err.message}`));
  });
  const port = await new Promise<number>((resolve, reject) => {
    udp.once("error", reject);
    udp.bind(o.port, o.address, () => resolve(udp.address().port));
  });
  // TCP: each message behind a two-byte length, several per connection.
  const tcp: Server = createServer((conn) => {
    let buf = Buffer.alloc(0);
    conn.on("error", () => conn.destroy());
    conn.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length > 65_537 * 4) return conn.destroy(); // more than a few messages queued: not a resolver
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        void answer(Buffer.from(msg), conn.remoteAddress?.replace(/^::ffff:/, "") ?? "").then((out) => {
          if (out === undefined || conn.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          conn.write(Buffer.concat([len, out]));
        });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, o.address, () => resolve());
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        udp.close();
        tcp.close(() => resolve());
      }),
  };
}
