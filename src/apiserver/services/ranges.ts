// The address and port ranges services draw from: `--service-cluster-ip-range`
// (a CIDR, IPv4 or IPv6) and `--service-node-port-range` (FIRST-LAST). IPs are
// handled as offsets into the CIDR (BigInt, so IPv6 works alike).

import { formatIp, parseIp } from "../../machinery/index.js";

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

/** An address as a number, in canonical text (machinery's IP reading, shared with the IPAddress kind). */
export function bigToIp(n: bigint, family: 4 | 6): string {
  return formatIp(n, family);
}

export function parseIpRange(cidr: string): IpRange {
  const [ip, bitsText] = cidr.split("/");
  const parsed = parseIp(ip ?? "");
  const family = parsed?.family;
  const bits = Number(bitsText);
  const width = family === 6 ? 128 : 32;
  if (parsed === undefined || family === undefined || !/^\d+$/.test(bitsText ?? "") || bits > width) throw new Error(`invalid CIDR ${JSON.stringify(cidr)}: want ADDRESS/BITS, e.g. 10.96.0.0/12`);
  const hostBits = BigInt(width - bits);
  if (hostBits < 2n) throw new Error(`the service CIDR ${cidr} is too small: it needs at least 4 addresses`);
  const network = (parsed.value >> hostBits) << hostBits;
  const size = 1n << hostBits;
  return { cidr: `${bigToIp(network, family)}/${bits}`, family, first: network + 1n, last: network + size - (family === 4 ? 2n : 1n) };
}

/** The IP in canonical form if it is in the range, else undefined. */
export function inRange(range: IpRange, ip: string): string | undefined {
  const parsed = parseIp(ip);
  if (parsed === undefined || parsed.family !== range.family) return undefined;
  const n = parsed.value;
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
