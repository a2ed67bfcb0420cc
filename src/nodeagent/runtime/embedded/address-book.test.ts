import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { AddressBook, parseSubnet } from "./address-book.js";

describe("AddressBook", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-address-book-"));
  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10 }));

  test("parseSubnet: network, prefix and the gateway (network + 1); bad input is refused with the reason", () => {
    const s = parseSubnet("10.89.3.7/16");
    assert.equal(s.prefix, 16);
    assert.equal(s.gateway, "10.89.0.1");
    assert.throws(() => parseSubnet("10.89.0.0"), /not an IPv4 CIDR/);
    assert.throws(() => parseSubnet("10.300.0.0/16"), /not an IPv4 CIDR/);
  });

  test("hands out each address once, skips the gateway, wraps after the last, and keeps host-local's file format", async () => {
    const book = new AddressBook(join(dir, "a"), parseSubnet("192.168.7.0/29")); // .2 to .6: five addresses
    const ips = ["s1", "s2", "s3", "s4", "s5"].map((id) => book.allocate(id, "eth0"));
    assert.deepEqual(ips, ["192.168.7.2", "192.168.7.3", "192.168.7.4", "192.168.7.5", "192.168.7.6"]);
    assert.throws(() => book.allocate("s6", "eth0"), /no free address in 192.168.7.0\/29/);
    assert.equal(readFileSync(join(dir, "a", "192.168.7.4"), "utf8"), "s3\r\neth0");
    await book.settled();
    assert.equal(readFileSync(join(dir, "a", "last_reserved_ip.0"), "utf8"), "192.168.7.6");
    book.release("192.168.7.3", "someone-else"); // not its holder: kept
    assert.throws(() => book.allocate("s6", "eth0"), /no free address/);
    book.release("192.168.7.3", "s2");
    book.release("192.168.7.3", "s2"); // idempotent
    assert.equal(book.allocate("s6", "eth0"), "192.168.7.3");
  });

  test("a new book (a restarted runtime) goes on after the last address handed out, not from the start", async () => {
    const book = new AddressBook(join(dir, "c"), parseSubnet("192.168.8.0/29"));
    assert.equal(book.allocate("s1", "eth0"), "192.168.8.2");
    assert.equal(book.allocate("s2", "eth0"), "192.168.8.3");
    book.release("192.168.8.2", "s1");
    await book.settled();
    assert.equal(new AddressBook(join(dir, "c"), parseSubnet("192.168.8.0/29")).allocate("s3", "eth0"), "192.168.8.4");
  });

  test("two books on one folder (two runtimes on one bridge) never hand out the same address", () => {
    const a = new AddressBook(join(dir, "b"), parseSubnet("10.1.0.0/24"));
    const b = new AddressBook(join(dir, "b"), parseSubnet("10.1.0.0/24"));
    const ips = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).allocate(`id-${i}`, "eth0"));
    assert.equal(new Set(ips).size, 40);
    assert.equal(readdirSync(join(dir, "b")).filter((f) => f.startsWith("10.1.0.")).length, 40);
  });

  test("collect gives back old reservations whose holder is gone, and keeps live ones and fresh ones", () => {
    const book = new AddressBook(join(dir, "d"), parseSubnet("192.168.9.0/29"));
    for (const id of ["live", "gone", "fresh-gone"]) book.allocate(id, "eth0");
    const now = Date.now();
    // "fresh-gone" was reserved just now (not yet wired, perhaps): only reservations older than the age go.
    utimesSync(join(dir, "d", "192.168.9.2"), new Date(now - 120_000), new Date(now - 120_000));
    utimesSync(join(dir, "d", "192.168.9.3"), new Date(now - 120_000), new Date(now - 120_000));
    const freed = book.collect((id) => id === "live", 60_000, now);
    assert.equal(freed, 1);
    assert.deepEqual(readdirSync(join(dir, "d")).filter((f) => f.startsWith("192.")).sort(), ["192.168.9.2", "192.168.9.4"]);
  });
});

