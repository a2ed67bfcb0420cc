// Loaded (--import) into every test file's process by scripts/run-tests.js: a
// file whose tests have all ended but whose process an open handle keeps
// alive (a server a failed test never closed) exits a minute later, with a
// line saying so, instead of holding the whole run. node's --test-force-exit
// would exit at once, but with files run side by side it can lose the
// verdicts the process had not flushed yet (nodejs/node#64833). A minute
// leaves the file's own `after` hooks (stopping clusters) time to finish.
import { after } from "node:test";

const GRACE_MS = 60_000;

after(() => {
  setTimeout(() => {
    process.stderr.write(`test-exit-guard: ${process.argv[1] ?? "a test file"}: its tests ended ${GRACE_MS / 1000} s ago and open handles still hold its process; exiting\n`);
    process.exit(process.exitCode ?? 0);
  }, GRACE_MS).unref();
});
