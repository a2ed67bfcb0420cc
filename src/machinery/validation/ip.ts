// IP addresses and CIDRs as upstream's strict validation reads them (the
// rules of k8s.io/apimachinery's IsValidIP / IsValidCIDR, with their
// messages): an address parsed leniently first (IPv4 octets may carry leading
// zeros, read as decimal), then refused when it has leading zeros, is an
// IPv4-mapped IPv6 address or is not in canonical form (RFC 5952 for IPv6).
// Addresses are numbers (BigInt) so IPv4 and IPv6 are handled alike.

export interface ParsedIp {
  readonly family: 4 | 6;
  readonly value: bigint;
  /** An IPv4 octet (or an embedded one) written with leading zeros. */
  readonly leadingZeros: boolean;
}

export interface ParsedCidr {
  readonly family: 4 | 6;
  /** The address as written. */
  readonly ip: bigint;
  readonly bits: number;
  /** The network address (host bits cleared). */
  readonly network: bigint;
  readonly leadingZeros: boolean;
}

export const INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
export const INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

function parseV4(text: string): { value: bigint; leadingZeros: boolean } | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  let leadingZeros = false;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    if (part.length > 1 && part.startsWith("0")) leadingZeros = true;
    value = (value << 8n) | BigInt(Number(part));
  }
  return { value, leadingZeros };
}

function parseV6(text: string): { value: bigint; leadingZeros: boolean } | undefined {
  let leadingZeros = false;
  let body = text;
  const tailGroups: bigint[] = [];
  // A trailing dotted quad counts as two groups.
  const lastColon = body.lastIndexOf(":");
  if (lastColon >= 0 && body.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(body.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    leadingZeros = v4.leadingZeros;
    tailGroups.push(v4.value >> 16n, v4.value & 0xffffn);
    body = body.slice(0, lastColon + 1);
    // "::1.2.3.4" leaves "::"; "a:b:1.2.3.4" leaves "a:b:" (the trailing colon is the separator).
    if (body.endsWith(":") && !body.endsWith("::")) body = body.slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (s: string): bigint[] | undefined => {
    if (s === "") return [];
    const out: bigint[] = [];
    for (const g of s.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(BigInt(parseInt(g, 16)));
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  const written = head.length + tail.length + tailGroups.length;
  let groups: bigint[];
  if (halves.length === 2) {
    if (written > 7) return undefined;
    groups = [...head, ...Array<bigint>(8 - written).fill(0n), ...tail, ...tailGroups];
  } else {
    if (written !== 8) return undefined;
    groups = [...head, ...tailGroups];
  }
  return { value: groups.reduce((n, g) => (n << 16n) | g, 0n), leadingZeros };
}

/** The address, read leniently (upstream's ParseIPSloppy: IPv4 octets may have leading zeros); undefined if it is none. */
export function parseIp(text: string): ParsedIp | undefined {
  if (text.includes(":")) {
    const v6 = parseV6(text);
    return v6 === undefined ? undefined : { family: 6, ...v6 };
  }
  const v4 = parseV4(text);
  return v4 === undefined ? undefined : { family: 4, ...v4 };
}

const V4_MAPPED_PREFIX = 0xffffn << 32n;
const isV4Mapped = (ip: { family: 4 | 6; value: bigint }) => ip.family === 6 && ip.value >> 32n === 0xffffn;

/** The canonical text of an address: dotted decimal, or RFC 5952 (lower case, the longest run of two or more zero groups as "::"). */
export function formatIp(value: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join(".");
  // Go prints an IPv4-mapped address as its IPv4 form.
  if (value >> 32n === 0xffffn) return formatIp(value - V4_MAPPED_PREFIX, 4);
  const groups = Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
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

/** upstream's strict IsValidIP: the messages (empty when valid) for an address that must be valid and canonical. */
export function validateIp(text: string): string[] {
  const ip = parseIp(text);
  if (ip === undefined) return [INVALID_IP];
  const errs: string[] = [];
  if (ip.leadingZeros) errs.push("must not have leading 0s");
  if (isV4Mapped(ip)) errs.push("must not be an IPv4-mapped IPv6 address");
  if (errs.length > 0) return errs;
  const canonical = formatIp(ip.value, ip.family);
  return canonical === text ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/** A CIDR read leniently (upstream's ParseCIDRSloppy); undefined if it is none. */
export function parseCidr(text: string): ParsedCidr | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const bitsText = text.slice(slash + 1);
  if (ip === undefined || !/^\d{1,3}$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  const width = ip.family === 4 ? 32 : 128;
  if (bits > width) return undefined;
  const hostBits = BigInt(width - bits);
  return {
    family: ip.family,
    ip: ip.value,
    bits,
    network: (ip.value >> hostBits) << hostBits,
    leadingZeros: ip.leadingZeros || (bitsText.length > 1 && bitsText.startsWith("0")),
  };
}

/** The canonical text of a CIDR: its network address and prefix length. */
export function formatCidr(cidr: ParsedCidr): string {
  return `${formatIp(cidr.network, cidr.family)}/${cidr.bits}`;
}

/** upstream's strict IsValidCIDR: the messages (empty when valid). */
export function validateCidr(text: string): string[] {
  const cidr = parseCidr(text);
  if (cidr === undefined) return [INVALID_CIDR];
  if (cidr.leadingZeros) return ["must not have leading 0s in IP or prefix length"];
  if (isV4Mapped({ family: cidr.family, value: cidr.ip })) return ["must not have an IPv4-mapped IPv6 address"];
  if (cidr.ip !== cidr.network) return ["must not have bits set beyond the prefix length"];
  const canonical = formatCidr(cidr);
  return canonical === text ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/** Whether the address is inside the CIDR (same family, same network bits). */
export function cidrContains(cidr: ParsedCidr, ip: ParsedIp): boolean {
  if (cidr.family !== ip.family) return false;
  const hostBits = BigInt((cidr.family === 4 ? 32 : 128) - cidr.bits);
  return ip.value >> hostBits === cidr.network >> hostBits;
}

/** upstream's ValidateIPAddressName, as a name rule: the name must be an IP address in canonical form. */
export function nameIsIPAddress(name: string, _prefix: boolean): string[] {
  return validateIp(name);
}
