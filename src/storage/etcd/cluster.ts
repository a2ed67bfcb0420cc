// Administering an etcd cluster through its gRPC API: list, add and remove
// members (how `orch server --cluster-init` grows a cluster and `orch etcd
// remove` shrinks it) and stream a snapshot of the keyspace to a file (`orch
// etcd snapshot save`). Calls fail over between the endpoints as the storage's do.

import { createWriteStream, renameSync, rmSync } from "node:fs";
import { once } from "node:events";
import { consoleLogger, EtcdConnection, type EtcdLogger, type EtcdTls } from "./connection.js";
import { etcdMethods, type Member } from "./rpc.js";
import { sleep } from "../../machinery/until.js";

export type EtcdMemberInfo = Member;

export interface EtcdClusterOptions {
  endpoints: string[];
  tls?: EtcdTls;
  /** How long one call may take, retries included (default 10 s). */
  requestTimeoutMs?: number;
  logger?: EtcdLogger;
}

export class EtcdCluster {
  readonly #connection: EtcdConnection;

  constructor(options: EtcdClusterOptions) {
    this.#connection = new EtcdConnection({
      endpoints: options.endpoints,
      dialTimeoutMs: 2000,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      logger: options.logger ?? quietLogger,
      ...(options.tls === undefined ? {} : { tls: options.tls }),
    });
  }

  /** The status of the member answering (fails while it has no leader). */
  async status(): Promise<{ version: string; leader: number; member: number }> {
    const res = await this.#connection.status();
    return { version: res.version, leader: res.leader, member: res.header.member_id };
  }

  async members(): Promise<Member[]> {
    return (await this.#connection.call(etcdMethods().memberList, {}, { mutation: false })).members;
  }

  /**
   * Adds a voting member with these peer URLs; answers the new member (no name
   * until it starts) and the whole list. Waits up to `waitMs` while etcd deems
   * the cluster not ready for another member.
   */
  async add(peerURLs: string[], waitMs = 60_000): Promise<{ member: Member; members: Member[] }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        return await this.#connection.call(etcdMethods().memberAdd, { peerURLs }, { mutation: true });
      } catch (err) {
        // etcd refuses an add until the members that would make the new quorum have been
        // connected for a while ("unhealthy cluster", e.g. just after another member joined).
        if (!/unhealthy cluster|not enough started members/.test((err as Error).message) || Date.now() > deadline) throw err;
      }
      await sleep(500);
      // The refusal may have come as "outcome unknown": an add that did go through is not repeated.
      const members = await this.members();
      const member = members.find((m) => peerURLs.every((u) => m.peerURLs.includes(u)));
      if (member !== undefined) return { member, members };
    }
  }

  /** Removes the member with this ID; answers the members left. */
  async remove(id: string): Promise<Member[]> {
    if (!/^[1-9]\d*$/.test(id)) throw new Error(`etcd: member ID ${JSON.stringify(id)} is not a decimal number`);
    return (await this.#connection.call(etcdMethods().memberRemove, { ID: id }, { mutation: true })).members;
  }

  /**
   * Streams a snapshot of the member's backend to `file` (written beside it
   * first, renamed once complete, so a broken stream never leaves a file that
   * looks whole). Answers the number of bytes written.
   */
  async snapshot(file: string): Promise<number> {
    const partial = `${file}.part`;
    const out = createWriteStream(partial, { mode: 0o600 });
    let bytes = 0;
    try {
      const stream = this.#connection.openServerStream(etcdMethods().snapshot, {});
      for await (const chunk of stream) {
        bytes += chunk.blob.length;
        if (!out.write(chunk.blob)) await once(out, "drain");
      }
      out.end();
      await once(out, "finish");
      renameSync(partial, file);
      return bytes;
    } catch (err) {
      out.destroy();
      rmSync(partial, { force: true });
      throw err;
    }
  }

  close(): void {
    this.#connection.close();
  }
}

const quietLogger: EtcdLogger = { info: () => {}, warn: (line) => consoleLogger.warn(line) };
