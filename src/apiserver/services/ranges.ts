// The address and port ranges services draw from: `--service-cluster-ip-range`
// (a CIDR, IPv4 or IPv6) and `--service-node-port-range` (FIRST-LAST). IPs are
// handled as offsets into the CIDR (BigInt, so IPv6 works alike).

import { isIP } from "node:net";

export interface IpRange {
  readonly cidr: string;
  readonly family: 4 | 6;
  /** Addresses a service may get: the network address (and IPv4's broadcast) excluded. */
  readonly first: bigint;
  readonly last: bigint;
}

export interface PortRange {
  readonly first: number;
  readonly last: number;
  readonly text: string;
}

function ipToBig(ip: string): bigint {
  if (isIP(ip) === 4) return ip.split(".").reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
  // IPv6: expand "::" then read eight 16-bit groups (a trailing dotted quad is read as two).
  let text = ip;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const v4 = ipToBig(quad[1]!);
    text = `${text.slice(0, -quad[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

export function bigToIp(n: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The canonical form: the longest run of zero groups (two or more) becomes "::".
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.len).join(":")}`;
}

export function parseIpRange(cidr: string): IpRange {
  const [ip, bitsText] = cidr.split("/");
  const family = isIP(ip ?? "");
  const bits = Number(bitsText);
  const width = family === 6 ? 128 : 32;
  if ((family !== 4 && family !== 6) || !/^\d+$/.test(bitsText ?? "") || bits > width) throw new Error(`invalid CIDR ${JSON.stringify(cidr)}: want ADDRESS/BITS, e.g. 10.96.0.0/12`);
  const hostBits = BigInt(width - bits);
  if (hostBits < 2n) throw new Error(`the service CIDR ${cidr} is too small: it needs at least 4 addresses`);
  const network = (ipToBig(ip!) >> hostBits) << hostBits;
  const size = 1n << hostBits;
  return { cidr: `${bigToIp(network, family)}/${bits}`, family, first: network + 1n, last: network + size - (family === 4 ? 2n : 1n) };
}

/** The IP in canonical form if it is in the range, else undefined. */
export function inRange(range: IpRange, ip: string): string | undefined {
  if (isIP(ip) !== range.family) return undefined;
  const n = ipToBig(ip);
  return n >= range.first && n <= range.last ? bigToIp(n, range.family) : undefined;
}

export function parsePortRange(text: string): PortRange {
  const m = /^(\d+)-(\d+)$/.exec(text.trim()) ?? /^(\d+)\+(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`invalid port range ${JSON.stringify(text)}: want FIRST-LAST, e.g. 30000-32767`);
  const first = Number(m[1]);
  const last = text.includes("+") ? first + Number(m[2]) : Number(m[2]);
  if (first < 1 || last > 65535 || first > last) throw new Error(`invalid port range ${JSON.stringify(text)}: ports are 1-65535, first ≤ last`);
  return { first, last, text: `${first}-${last}` };
}
