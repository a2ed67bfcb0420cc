// `orch snapshot save FILE | restore FILE`: backups of the embedded store
// (docs/reliability.md, "Damaged store"). `save` copies the store of
// --data-dir while the server runs (one consistent lmdb read transaction,
// compacted) and checks every value of the copy against its checksum;
// `restore` checks a snapshot the same way and installs it as the store of a
// --data-dir that has none, for the server to start on.

import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { flag } from "../component/index.js";
import { LmdbStorage, STORE_FILE, type StoreCheck } from "../storage/lmdb/index.js";
import { defineCommand, type Output } from "./command.js";

const ACTIONS = ["save", "restore"] as const;
/** lmdb's lock file beside a store opened in noSubdir mode. */
const LOCK = "-lock";

export const command = defineCommand({
  name: "snapshot",
  summary: "save or restore a snapshot of the embedded store (save FILE | restore FILE)",
  description:
    "'orch snapshot save FILE' copies the embedded store of --data-dir into FILE, also while the server runs (a consistent " +
    "copy), and checks every value of the copy against its checksum. 'orch snapshot restore FILE' checks a snapshot and " +
    "installs it as the store of --data-dir, which must have none (stop the server and move a damaged store.mdb away first).",
  flags: {
    "data-dir": flag.string({ default: "./.orch", description: "orch's state directory, whose store.mdb is saved or restored." }),
  },
  positionals: { name: "ACTION FILE", description: `one of ${ACTIONS.join(", ")}, then the snapshot file` },
  validate(flags) {
    const [action, file, ...rest] = flags.args;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) return `unknown action "${action ?? ""}": use ${ACTIONS.join(" or ")}`;
    if (file === undefined || file === "") return `"${action}" needs the snapshot FILE`;
    if (rest.length > 0) return `"${action}" takes one FILE`;
    return undefined;
  },
  async run(flags, context) {
    const [action, file] = flags.args as [string, string];
    const store = join(flags.get("data-dir"), STORE_FILE);
    const fail = (message: string) => {
      context.stderr.write(`${context.command}: ${message}\n`);
      return 1;
    };
    if (existsSync(file) && action === "save") return fail(`${file} exists; refusing to overwrite it`);
    if (action === "save") {
      if (!existsSync(store)) return fail(`no store at ${store}`);
      const source = await LmdbStorage.openFile(store);
      let check: StoreCheck;
      try {
        check = await source.snapshot(file);
      } finally {
        await source.close();
        rmSync(file + LOCK, { force: true });
      }
      report(context.stdout, `saved ${store} into ${file}`, check);
      return check.damaged.length === 0 ? 0 : fail(`the snapshot holds ${check.damaged.length} damaged values (listed above)`);
    }
    if (existsSync(store)) return fail(`${store} exists; stop the server and move it away before restoring`);
    mkdirSync(flags.get("data-dir"), { recursive: true, mode: 0o700 });
    const staged = `${store}.restoring`;
    copyFileSync(file, staged);
    try {
      const copy = await LmdbStorage.openFile(staged);
      let check: StoreCheck;
      try {
        check = copy.check();
      } finally {
        await copy.close();
      }
      if (check.damaged.length > 0) {
        report(context.stdout, `${file} is damaged`, check);
        return fail(`refusing to restore ${file}: ${check.damaged.length} values fail their checksums`);
      }
      renameSync(staged, store);
      report(context.stdout, `restored ${file} into ${store}`, check);
      return 0;
    } finally {
      rmSync(staged, { force: true });
      rmSync(staged + LOCK, { force: true });
    }
  },
});

function report(out: Output, what: string, check: StoreCheck): void {
  out.write(`${what}: revision ${check.revision}, ${check.keys} keys, ${check.values} values checked, ${check.damaged.length} damaged\n`);
  for (const d of check.damaged) out.write(`  damaged: ${d}\n`);
}
