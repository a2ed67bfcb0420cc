// The pod network's IPv4 address book, kept in the CNI host-local plugin's
// on-disk format (<dir>/<ip> holding "<sandbox id>\r\n<ifname>",
// last_reserved_ip.0), so runtimes that still call the plugin can share a
// bridge with this one. An address is taken by creating its file with O_EXCL:
// atomic across every process on the host, as the plugin does it.

import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface Subnet {
  /** First address of the subnet, as a 32-bit number. */
  network: number;
  prefix: number;
  /** The bridge's address (network + 1): never handed to a pod. */
  gateway: string;
}

export function parseSubnet(cidr: string): Subnet {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  const parts = m?.slice(1, 5).map(Number) ?? [];
  const prefix = Number(m?.[5]);
  if (m === null || parts.some((p) => p > 255) || prefix < 8 || prefix > 30) throw new Error(`pod subnet ${JSON.stringify(cidr)} is not an IPv4 CIDR with a prefix of 8 to 30 bits`);
  const mask = (0xffffffff << (32 - prefix)) >>> 0;
  const network = (parts.reduce((n, p) => n * 256 + p, 0) & mask) >>> 0;
  return { network, prefix, gateway: ipString(network + 1) };
}

export function ipString(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

function ipNumber(ip: string): number {
  return ip.split(".").reduce((n, p) => n * 256 + Number(p), 0);
}

export class AddressBook {
  readonly #dir: string;
  readonly #subnet: Subnet;
  /** Offset (from network + 2) of the last address this book handed out; read from the hint file once. */
  #last: number | undefined;
  /** The hint file's write under way: written in the background, one at a time, newest last. */
  #hint: Promise<void> = Promise.resolve();

  /** `dir` is host-local's `<dataDir>/<network name>`. */
  constructor(dir: string, subnet: Subnet) {
    this.#dir = dir;
    this.#subnet = subnet;
    mkdirSync(dir, { recursive: true });
  }

  /**
   * Takes the next free address after the last one handed out (wrapping), as
   * host-local does. last_reserved_ip.0 is only where to start looking (the
   * O_EXCL file is the reservation): it is read once and rewritten in the
   * background, as a synchronous rewrite on ext4 waits for its data (replace
   * by truncate), a millisecond or more of blocked event loop per pod.
   */
  allocate(id: string, ifname: string): string {
    const first = this.#subnet.network + 2; // network + 1 is the gateway
    const size = 2 ** (32 - this.#subnet.prefix) - 3; // without network, gateway and broadcast
    const lastFile = join(this.#dir, "last_reserved_ip.0");
    if (this.#last === undefined) {
      try {
        this.#last = ipNumber(readFileSync(lastFile, "utf8").trim()) - first;
      } catch {
        this.#last = -1;
      }
    }
    if (!(this.#last >= -1 && this.#last < size)) this.#last = -1;
    for (let i = 1; i <= size; i++) {
      const offset = (this.#last + i) % size;
      const ip = ipString(first + offset);
      let fd: number;
      try {
        fd = openSync(join(this.#dir, ip), "wx", 0o644);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
        throw err;
      }
      writeSync(fd, `${id}\r\n${ifname}`);
      closeSync(fd);
      this.#last = offset;
      this.#hint = this.#hint.then(() => writeFile(lastFile, ip)).catch(() => {});
      return ip;
    }
    throw new Error(`no free address in ${ipString(this.#subnet.network)}/${this.#subnet.prefix}`);
  }

  /** Resolves once the hint file holds the last address handed out (tests). */
  settled(): Promise<void> {
    return this.#hint;
  }

  /** Gives `ip` back if `id` holds it; idempotent. */
  release(ip: string, id: string): void {
    const file = join(this.#dir, ip);
    try {
      if (readFileSync(file, "utf8").split("\r\n")[0]!.trim() !== id) return; // handed to another pod since
    } catch {
      return;
    }
    rmSync(file, { force: true });
  }

  /**
   * Gives back every address reserved more than `minAgeMs` ago whose holder
   * `isLive` denies (a pod whose runtime was killed between reserving and
   * recording it, or whose records were deleted): without this a host's book
   * only grows. The age leaves alone reservations still being wired.
   */
  collect(isLive: (id: string) => boolean, minAgeMs: number, now = Date.now()): number {
    let n = 0;
    for (const ip of readdirSync(this.#dir)) {
      if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) continue;
      const file = join(this.#dir, ip);
      try {
        if (now - statSync(file).mtimeMs < minAgeMs) continue;
        const id = readFileSync(file, "utf8").split("\r\n")[0]!.trim();
        if (isLive(id)) continue;
        this.release(ip, id);
        n++;
      } catch {
        // released meanwhile
      }
    }
    return n;
  }
}
