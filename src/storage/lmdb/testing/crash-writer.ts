// Child process for the crash test: 32 concurrent writers create keys in a
// loop and print "ack <key> <revision>" once each write is acknowledged.
// The parent kills it with SIGKILL mid-burst and checks what survived.
import { LmdbStorage } from "../lmdb-storage.js";

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error("usage: crash-writer DATA_DIR");
const store = await LmdbStorage.open({ dataDir });
const value = new Uint8Array(3 * 1024).fill(7);
let next = 0;
process.stdout.write("ready\n");
await Promise.all(
  Array.from({ length: 32 }, async () => {
    for (;;) {
      const key = `/crash/${String(next++).padStart(8, "0")}`;
      const kv = await store.create(key, value);
      process.stdout.write(`ack ${key} ${kv.modRevision}\n`);
    }
  }),
);
