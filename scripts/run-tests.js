#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's built-in runner.
// Usage: node scripts/run-tests.js [substring ...]  — only files whose path contains one of the substrings.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { spawnSync } from "node:child_process";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");

function findTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(path));
    else if (entry.name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = findTests(dist)
  .filter((f) => filters.length === 0 || filters.some((s) => relative(root, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error("no test files found under dist/ (did the build run?)");
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  // --test-force-exit: a file whose tests have all ended must not hold CI on a stray handle (one did, once, under load).
  ["--test", "--test-concurrency=2", "--test-force-exit", "--test-reporter=spec", ...files],
  { stdio: "inherit", cwd: root },
);
process.exit(result.status ?? 1);
