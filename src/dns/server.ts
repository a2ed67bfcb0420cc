// The cluster DNS server of `orch server` (what CoreDNS does for upstream
// clusters): UDP and TCP on one address and port; names under the cluster
// domain and the reverse names of cluster addresses are answered from the
// cluster (records.ts, TTL 5 s, NXDOMAIN or no data with the zone's SOA, SRV
// targets' addresses in the additional section; over UDP an answer larger
// than the client takes is sent truncated, for it to ask again over TCP);
// other names are forwarded as they are to the host's resolvers.
// Only clients `allowed` says are ours (pods, nodes, this host) get answers:
// it never becomes an open resolver on the node's network.

import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket as TcpConnection } from "node:net";
import * as dnsPacket from "dns-packet";
import { lookup, type Answer, type ClusterView } from "./records.js";

const TTL_S = 5;
const FORWARD_TIMEOUT_MS = 2_000;
const QR_AA = 1 << 10;
const TC = 1 << 9;
/** A UDP answer's limit when the query carries no EDNS payload size (RFC 1035). */
const UDP_PLAIN_MAX = 512;
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

interface Sections {
  answers?: dnsPacket.Answer[];
  authorities?: dnsPacket.Answer[];
  additionals?: dnsPacket.Answer[];
}

/** The query's EDNS record, if any (echoed in the answer, as resolvers expect). */
function ednsOf(query: dnsPacket.Packet): dnsPacket.OptAnswer | undefined {
  return query.additionals?.find((a): a is dnsPacket.OptAnswer => a.type === "OPT");
}

function reply(query: dnsPacket.Packet, rcode: number, aa: boolean, sections: Sections = {}, truncated = false): Buffer {
  const rd = (query.flags ?? 0) & RD;
  const opt = ednsOf(query);
  return dnsPacket.encode({
    type: "response",
    id: query.id ?? 0,
    flags: (aa ? QR_AA : 0) | (truncated ? TC : 0) | rd | RA | rcode,
    questions: query.questions ?? [],
    answers: truncated ? [] : sections.answers ?? [],
    authorities: truncated ? [] : sections.authorities ?? [],
    additionals: [...(truncated ? [] : sections.additionals ?? []), ...(opt ? [{ type: "OPT" as const, name: ".", udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [])],
  });
}

/** The zone's SOA (upstream's values: the zone's ns.dns and hostmaster names, TTL and negative TTL 5 s). */
function soa(zone: string): dnsPacket.Answer {
  return {
    type: "SOA", name: zone, ttl: TTL_S, class: "IN",
    data: { mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: Math.floor(Date.now() / 1000) % 2 ** 32, refresh: 7200, retry: 1800, expire: 86400, minimum: TTL_S },
  };
}

function record(a: Answer): dnsPacket.Answer {
  switch (a.type) {
    case "A":
    case "AAAA":
      return { type: a.type, name: a.name, ttl: TTL_S, class: "IN", data: a.address };
    case "CNAME":
    case "PTR":
      return { type: a.type, name: a.name, ttl: TTL_S, class: "IN", data: a.target };
    case "SRV":
      return { type: "SRV", name: a.name, ttl: TTL_S, class: "IN", data: { priority: 0, weight: a.weight, port: a.port, target: a.target } };
  }
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
  const domain = o.domain.toLowerCase().replace(/\.$/, "");
  /** The answer to `raw`; over UDP (`udp`) one that does not fit the client's size goes out truncated. */
  const answer = async (raw: Buffer, client: string, udp: boolean): Promise<Buffer | undefined> => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(raw);
    } catch {
      return undefined; // not DNS: no answer, as resolvers do with garbage
    }
    if (query.type !== "query") return undefined;
    if (!o.allowed(client)) return reply(query, RCODE.REFUSED, false);
    const q = query.questions?.[0];
    if (q === undefined || (query.questions?.length ?? 0) > 1) return reply(query, RCODE.FORMERR, false);
    const qtype: string = q.type; // "ANY" too, which the typings leave out
    const found = lookup(o.view, domain, q.name, qtype);
    if (!found.authoritative) return (await forward(raw, upstreams)) ?? reply(query, RCODE.SERVFAIL, false);
    const name = q.name.toLowerCase().replace(/\.$/, "");
    const apex = name === domain && (qtype === "SOA" || qtype === "ANY");
    const answers = [...(apex ? [soa(domain)] : []), ...found.answers.map(record)];
    const inZone = name === domain || name.endsWith(`.${domain}`);
    // No answer (NXDOMAIN or no data): the zone's SOA tells resolvers how long to remember that.
    const sections: Sections = { answers, additionals: found.additional.map(record), authorities: answers.length === 0 && inZone ? [soa(domain)] : [] };
    const rcode = found.exists || answers.length > 0 ? RCODE.NOERROR : RCODE.NXDOMAIN;
    const out = reply(query, rcode, true, sections);
    const limit = Math.max(UDP_PLAIN_MAX, ednsOf(query)?.udpPayloadSize ?? 0);
    return udp && out.length > limit ? reply(query, rcode, true, {}, true) : out;
  };

  const onMessage = (udp: Socket) => (msg: Buffer, rinfo: RemoteInfo) => {
    void answer(msg, rinfo.address, true).then((out) => out && udp.send(out, rinfo.port, rinfo.address)).catch((err: Error) => o.log?.(`dns: ${err.message}`));
  };
  // TCP: each message behind a two-byte length, several per connection.
  const onConnection = (conn: TcpConnection) => {
    let buf = Buffer.alloc(0);
    conn.on("error", () => conn.destroy());
    conn.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length > 65_537 * 4) return conn.destroy(); // more than a few messages queued: not a resolver
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        void answer(Buffer.from(msg), conn.remoteAddress?.replace(/^::ffff:/, "") ?? "", false).then((out) => {
          if (out === undefined || conn.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          conn.write(Buffer.concat([len, out]));
        }).catch((err: Error) => o.log?.(`dns: ${err.message}`));
      }
    });
  };
  const { udp, tcp, port } = await listenBoth(o, onMessage, onConnection);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        udp.close();
        tcp.close(() => resolve());
      }),
  };
}

/**
 * A UDP socket and a TCP server on one port. With port 0 the UDP socket picks it, and the TCP port of
 * that number may be taken (an outgoing connection's, another server's): then both are closed and
 * another port is tried.
 */
async function listenBoth(
  o: DnsServerOptions,
  onMessage: (udp: Socket) => (msg: Buffer, rinfo: RemoteInfo) => void,
  onConnection: (conn: TcpConnection) => void,
): Promise<{ udp: Socket; tcp: Server; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp: Socket = createSocket(o.address.includes(":") ? "udp6" : "udp4");
    udp.on("message", onMessage(udp));
    const port = await new Promise<number>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind(o.port, o.address, () => resolve(udp.address().port));
    });
    const tcp: Server = createServer(onConnection);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(port, o.address, () => resolve());
      });
      return { udp, tcp, port };
    } catch (err) {
      udp.close();
      if (o.port !== 0 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt === 20) throw err;
    }
  }
}
