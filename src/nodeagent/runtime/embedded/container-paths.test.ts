import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveInRoot } from "./container-paths.js";

test("resolveInRoot follows links inside the root, absolute ones from the root, and keeps missing parts", () => {
  const root = mkdtempSync(join(tmpdir(), "orch-container-paths-"));
  mkdirSync(join(root, "run"));
  mkdirSync(join(root, "var"));
  symlinkSync("/run", join(root, "var", "run"));
  symlinkSync("../../etc", join(root, "run", "up"));
  symlinkSync("loop", join(root, "loop"));
  assert.equal(resolveInRoot(root, "/var/run/secrets/orch.io/serviceaccount"), "/run/secrets/orch.io/serviceaccount");
  assert.equal(resolveInRoot(root, "/run/up/x"), "/etc/x", "a relative link cannot climb above the root");
  assert.equal(resolveInRoot(root, "/data/../tmp/./a"), "/tmp/a");
  assert.throws(() => resolveInRoot(root, "/loop/a"), /too many symbolic links/);
});
