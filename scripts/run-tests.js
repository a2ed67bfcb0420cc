#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's built-in runner.
// Usage: node scripts/run-tests.js [substring ...]  — only files whose path contains one of the substrings.
//
// No --test-force-exit: with more than one file at a time, node's runner can then lose the verdicts a
// file's process wrote just before it was made to exit (nodejs/node#64833: fewer tests reported, exit 0;
// seen here, a run that reported 43 of a file's 55 tests). A file held open by a stray handle after its
// tests exits a minute later instead (test-exit-guard.js), and a run past its deadline (a file that never
// ends its tests) names the files still running and fails.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { spawn } from "node:child_process";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const deadlineSeconds = Number(process.env.ORCH_TEST_DEADLINE_S ?? 3600);

function findTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(path));
    else if (entry.name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

/** The runner's (process `pid`) children still running: each test file runs in a process of its own. */
function childrenOf(pid) {
  const children = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent !== pid) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      children.push({ pid: Number(entry), files: args.filter((a) => a.endsWith(".test.js")).map((a) => relative(root, a)) });
    } catch {
      // the process ended while we looked
    }
  }
  return children;
}

const filters = process.argv.slice(2);
const files = findTests(dist)
  .filter((f) => filters.length === 0 || filters.some((s) => relative(root, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error("no test files found under dist/ (did the build run?)");
  process.exit(1);
}
const guard = join(root, "scripts", "test-exit-guard.js");
const runner = spawn(process.execPath, ["--test", "--test-concurrency=2", `--import=${guard}`, "--test-reporter=spec", ...files], {
  stdio: "inherit",
  cwd: root,
});
const deadline = setTimeout(() => {
  const children = childrenOf(runner.pid);
  const running = children.flatMap((c) => c.files);
  console.error(
    `\nrun-tests: the run passed its deadline of ${deadlineSeconds} s (ORCH_TEST_DEADLINE_S); ` +
      `files still running: ${running.length > 0 ? running.join(", ") : "none (the runner itself did not exit)"}`,
  );
  for (const child of children) process.kill(child.pid, "SIGKILL");
  runner.kill("SIGKILL");
}, deadlineSeconds * 1000);
runner.on("exit", (code, signal) => {
  clearTimeout(deadline);
  process.exitCode = code ?? (signal ? 1 : 0);
});
