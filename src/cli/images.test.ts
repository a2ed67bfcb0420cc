// `orch images`: import docker-save and OCI archives into a store, list them,
// remove them; bad input exits with a clear message and loses nothing.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ImageStore } from "../nodeagent/runtime/images/store.js";
import { buildBusyboxImage, busyboxSkipReason } from "../../test/support/busybox-image.js";
import { main } from "./main.js";

let dir: string;
const skip = busyboxSkipReason();

before(() => {
  dir = mkdtempSync(join(tmpdir(), "orch-images-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function orch(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const status = await main(args, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  return { status, stdout, stderr };
}

test("import a docker save and an OCI archive, list them, remove one", { skip }, async () => {
  const root = join(dir, "a");
  const dockerId = await buildBusyboxImage({ file: join(dir, "docker.tar"), tags: ["busybox:1.36"] });
  const ociId = await buildBusyboxImage({ file: join(dir, "oci.tar"), format: "oci", tags: ["example.com/team/tool:v2"], files: { "tool.txt": "v2\n" } });
  const imported = await orch("images", "import", "--root", root, join(dir, "docker.tar"), join(dir, "oci.tar"));
  assert.equal(imported.status, 0, imported.stderr);
  assert.match(imported.stdout, new RegExp(`imported docker.io/library/busybox:1.36 \\(${dockerId}\\)`));
  assert.match(imported.stdout, new RegExp(`imported example.com/team/tool:v2 \\(${ociId}\\)`));

  const list = await orch("images", "--root", root);
  assert.equal(list.status, 0);
  const lines = list.stdout.trim().split("\n");
  assert.match(lines[0]!, /^IMAGE\s+TAG\s+IMAGE ID\s+SIZE$/);
  assert.ok(lines.some((l) => new RegExp(`^docker.io/library/busybox\\s+1.36\\s+${dockerId.slice(7, 20)}\\s+\\d`).test(l)), list.stdout);
  assert.ok(lines.some((l) => /^example.com\/team\/tool\s+v2\s/.test(l)), list.stdout);

  const store = new ImageStore(root);
  assert.equal(store.resolve("busybox:1.36")?.id, dockerId);
  assert.equal(store.resolve(dockerId.slice(7, 19))?.id, dockerId, "by ID prefix");

  const removed = await orch("images", "remove", "--root", root, "example.com/team/tool:v2");
  assert.equal(removed.status, 0, removed.stderr);
  assert.deepEqual((await orch("images", "list", "-q", "--root", root)).stdout, `${dockerId}\n`);
});

test("re-importing a tag moves it to the new image, as docker load does", { skip }, async () => {
  const root = join(dir, "b");
  const first = await buildBusyboxImage({ file: join(dir, "v1.tar"), tags: ["app:latest"], files: { v: "1" } });
  const second = await buildBusyboxImage({ file: join(dir, "v2.tar"), tags: ["app:latest"], files: { v: "2" } });
  assert.equal((await orch("images", "import", "--root", root, join(dir, "v1.tar"))).status, 0);
  assert.equal((await orch("images", "import", "--root", root, join(dir, "v2.tar"))).status, 0);
  const store = new ImageStore(root);
  assert.equal(store.resolve("app")?.id, second);
  assert.deepEqual(store.resolve(first)?.repoTags, []);
});

test("pull from a registry that is not there fails clearly and stores nothing", async () => {
  const root = join(dir, "d");
  const r = await orch("images", "pull", "--root", root, "127.0.0.1:1/team/app:v1");
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^orch images: failed to do request: GET http:\/\/127.0.0.1:1\/v2\/team\/app\/manifests\/v1: /m);
  assert.deepEqual(new ImageStore(root).list(), []);
});

test("bad input: a missing file, a file that is no archive, an unknown action, a missing argument", async () => {
  const root = join(dir, "c");
  const missing = await orch("images", "import", "--root", root, join(dir, "nope.tar"));
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no such file/);
  writeFileSync(join(dir, "junk.tar"), "this is not a tar archive at all".repeat(40));
  const junk = await orch("images", "import", "--root", root, join(dir, "junk.tar"));
  assert.equal(junk.status, 1);
  assert.match(junk.stderr, /not a tar archive|neither a docker save archive/);
  assert.deepEqual(new ImageStore(root).list(), [], "nothing half-imported");
  const unknown = await orch("images", "frobnicate", "--root", root);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown action "frobnicate"/);
  const bare = await orch("images", "import", "--root", root);
  assert.equal(bare.status, 2);
  assert.match(bare.stderr, /"import" needs at least one FILE/);
  const gone = await orch("images", "remove", "--root", root, "never:seen");
  assert.equal(gone.status, 1);
  assert.match(gone.stderr, /no image "never:seen"/);
});
