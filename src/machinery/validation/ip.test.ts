// IP and CIDR parsing with upstream's strict rules and messages (IsValidIP,
// IsValidCIDR as of v1.33): lenient reading, then leading zeros, IPv4-mapped
// IPv6, bits beyond the prefix and non-canonical forms refused.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cidrContains, formatIp, parseCidr, parseIp, validateCidr, validateIp } from "./ip.js";

test("validateIp: valid canonical addresses pass, every other form gets upstream's message", () => {
  for (const ok of ["10.96.0.1", "0.0.0.0", "255.255.255.255", "2001:db8::1", "::", "::1", "fd00:1:2:3:4:5:6:7", "2001:db8:0:1::"]) assert.deepEqual(validateIp(ok), [], ok);
  const cases: [string, string][] = [
    ["", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
    ["10.96.0", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
    ["10.96.0.256", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
    ["10.0.0.0/24", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
    ["fe80::1%eth0", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
    ["1::2::3", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
    ["10.01.2.3", "must not have leading 0s"],
    ["::ffff:1.2.3.4", "must not be an IPv4-mapped IPv6 address"],
    ["2001:DB8::1", 'must be in canonical form ("2001:db8::1")'],
    ["2001:db8:0:0:0:0:0:1", 'must be in canonical form ("2001:db8::1")'],
    ["2001:0db8::1", 'must be in canonical form ("2001:db8::1")'],
    ["1:0:0:2:0:0:0:3", 'must be in canonical form ("1:0:0:2::3")'],
    ["::1.2.3.4", 'must be in canonical form ("::102:304")'],
  ];
  for (const [input, message] of cases) assert.deepEqual(validateIp(input), [message], input);
  // One zero group is not compressed (RFC 5952 4.2.2); the first of equal runs is.
  assert.equal(formatIp(parseIp("1:0:2:3:4:5:6:7")!.value, 6), "1:0:2:3:4:5:6:7");
  assert.equal(formatIp(parseIp("1:0:0:2:0:0:3:4")!.value, 6), "1::2:0:0:3:4");
});

test("validateCidr: network/prefix in canonical form; each other form refused with upstream's message", () => {
  for (const ok of ["10.96.0.0/12", "0.0.0.0/0", "10.0.0.1/32", "2001:db8::/64", "::/0"]) assert.deepEqual(validateCidr(ok), [], ok);
  const cases: [string, string][] = [
    ["10.96.0.0", "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"],
    ["10.96.0.0/33", "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"],
    ["10.96.0.0/x", "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"],
    ["010.96.0.0/12", "must not have leading 0s in IP or prefix length"],
    ["10.96.0.0/012", "must not have leading 0s in IP or prefix length"],
    ["::ffff:10.0.0.0/104", "must not have an IPv4-mapped IPv6 address"],
    ["10.96.3.7/12", "must not have bits set beyond the prefix length"],
    ["2001:DB8::/64", 'must be in canonical form ("2001:db8::/64")'],
  ];
  for (const [input, message] of cases) assert.deepEqual(validateCidr(input), [message], input);
});

test("cidrContains: same family and network bits", () => {
  const range = parseCidr("10.96.0.0/12")!;
  assert.equal(cidrContains(range, parseIp("10.111.255.254")!), true);
  assert.equal(cidrContains(range, parseIp("10.112.0.0")!), false);
  assert.equal(cidrContains(range, parseIp("::a60:1")!), false, "another family never matches");
  assert.equal(cidrContains(parseCidr("fd00::/8")!, parseIp("fd12::1")!), true);
});
