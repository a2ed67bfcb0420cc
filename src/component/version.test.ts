import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitCommitOf, versionInfo } from "./version.js";
import { packageRoot } from "./package-root.js";

const A = "a".repeat(40);
const B = "0123456789abcdef0123456789abcdef01234567";

test("gitCommitOf reads HEAD: detached, a loose branch, a packed branch, and a worktree's gitdir file", () => {
  const root = mkdtempSync(join(tmpdir(), "version-git-"));
  try {
    const repo = join(root, "repo");
    mkdirSync(join(repo, ".git", "refs", "heads"), { recursive: true });
    writeFileSync(join(repo, ".git", "HEAD"), `${A}\n`);
    assert.equal(gitCommitOf(repo), A);
    writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(repo, ".git", "refs", "heads", "main"), `${B}\n`);
    assert.equal(gitCommitOf(repo), B);
    writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/packed\n");
    writeFileSync(join(repo, ".git", "packed-refs"), `# pack-refs with: peeled fully-peeled sorted\n${A} refs/heads/packed\n`);
    assert.equal(gitCommitOf(repo), A);
    // A worktree: .git is a file naming its git dir, whose branches are in the common dir.
    const wt = join(root, "wt");
    mkdirSync(join(repo, ".git", "worktrees", "wt"), { recursive: true });
    writeFileSync(join(repo, ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n");
    mkdirSync(wt);
    writeFileSync(join(wt, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "wt")}\n`);
    assert.equal(gitCommitOf(wt), B);
    // No checkout, or a branch with no commit yet: no commit.
    assert.equal(gitCommitOf(join(root, "none")), "");
    writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/unborn\n");
    assert.equal(gitCommitOf(repo), "");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("/version's gitCommit is this checkout's commit, as git names it", () => {
  let expected: string;
  try {
    expected = execFileSync("git", ["-C", packageRoot(), "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return; // not a git checkout (an installed package): nothing to compare
  }
  assert.equal(versionInfo().gitCommit, expected);
  assert.match(versionInfo().gitCommit, /^[0-9a-f]{40}$/);
});
