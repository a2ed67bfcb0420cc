// Image references as runtimes normalize them, and layer application with OCI
// whiteouts (a deleted file, an opaque directory) in order.

import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import * as tar from "tar";
import { applyLayer } from "./archive.js";
import { isImageId, normalizeReference } from "./reference.js";

test("references normalize as containerd and docker spell them", () => {
  const cases: Array<[string, string]> = [
    ["busybox", "docker.io/library/busybox:latest"],
    ["busybox:1.36", "docker.io/library/busybox:1.36"],
    ["team/app", "docker.io/team/app:latest"],
    ["registry.example:5000/team/app:v1", "registry.example:5000/team/app:v1"],
    ["localhost/app", "localhost/app:latest"],
    [`busybox@sha256:${"a".repeat(64)}`, `docker.io/library/busybox@sha256:${"a".repeat(64)}`],
  ];
  for (const [input, want] of cases) assert.equal(normalizeReference(input), want, input);
  for (const bad of ["", "Upper/Case", "a b", "app@sha256:short", "app:bad tag"]) assert.throws(() => normalizeReference(bad), /invalid reference format/, bad);
  assert.ok(isImageId(`sha256:${"0".repeat(64)}`));
  assert.ok(!isImageId("sha256:abc"));
});

test("layers apply in order: .wh.<name> deletes, .wh..wh..opq empties the directory below", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-layers-"));
  try {
    const layer = async (name: string, files: Record<string, string>): Promise<string> => {
      const src = join(dir, `${name}-src`);
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(join(src, path, ".."), { recursive: true });
        writeFileSync(join(src, path), content);
      }
      const file = join(dir, `${name}.tar`);
      await tar.c({ cwd: src, file, gzip: name === "two" }, readdirSync(src));
      return file;
    };
    const one = await layer("one", { "a/x": "x1", "a/y": "y1", "b/old": "old", "c/keep": "keep" });
    const two = await layer("two", { "a/.wh.x": "", "b/.wh..wh..opq": "", "b/new": "new", "c/keep": "keep2" });
    const root = join(dir, "root");
    mkdirSync(root);
    await applyLayer(one, root);
    await applyLayer(two, root); // gzip-compressed
    assert.deepEqual(readdirSync(join(root, "a")), ["y"]);
    assert.deepEqual(readdirSync(join(root, "b")), ["new"]);
    assert.equal(readFileSync(join(root, "c", "keep"), "utf8"), "keep2");
    assert.equal(existsSync(join(root, "a", ".wh.x")), false, "whiteout markers are not unpacked");
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});

test("symlinks keep their targets: an absolute one points inside the container's root as written; none lands outside the root", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-layers-links-"));
  try {
    const src = join(dir, "src");
    mkdirSync(join(src, "bin"), { recursive: true });
    mkdirSync(join(src, "usr/bin"), { recursive: true });
    writeFileSync(join(src, "usr/bin/bash"), "#!bash");
    symlinkSync("/usr/bin/bash", join(src, "bin/sh"));
    symlinkSync("busybox", join(src, "bin/ls"));
    const file = join(dir, "links.tar");
    await tar.c({ cwd: src, file, portable: true }, ["bin", "usr"]);
    const root = join(dir, "root");
    mkdirSync(root);
    await applyLayer(file, root);
    assert.equal(readlinkSync(join(root, "bin/sh")), "/usr/bin/bash");
    assert.equal(readlinkSync(join(root, "bin/ls")), "busybox");
    // A later layer replacing the link, and one naming a path through `..`: the first applies, the second is dropped.
    const evil = join(dir, "evil-src");
    mkdirSync(join(evil, "bin"), { recursive: true });
    symlinkSync("/usr/bin/dash", join(evil, "bin/sh"));
    const evilTar = join(dir, "evil.tar");
    await tar.c({ cwd: evil, file: evilTar, portable: true }, ["bin"]);
    await applyLayer(evilTar, root);
    assert.equal(readlinkSync(join(root, "bin/sh")), "/usr/bin/dash");
    const escaping = join(dir, "escape.tar");
    await tar.c({ cwd: evil, file: escaping, portable: true, preservePaths: true, onWriteEntry: (e) => { e.path = "../outside-link"; } } as tar.TarOptionsWithAliasesFile, ["bin/sh"]);
    await applyLayer(escaping, root);
    assert.equal(existsSync(join(dir, "outside-link")) || lstatExists(join(dir, "outside-link")), false, "nothing written outside the root");
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});

function lstatExists(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}
