#!/usr/bin/env node
// Launcher for the `orch` command: runs the compiled CLI in dist/ (built by
// `npm run build`) and exits with the status it returns.
import { existsSync } from "node:fs";

const entry = new URL("../dist/src/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("orch: dist/src/cli/main.js is missing; run npm run build first\n");
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
