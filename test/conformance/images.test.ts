// The offline conformance images work as the suite's: the httpd image's
// Apache starts (in a private network namespace, so its port 80 is its own)
// and stays up, as the StatefulSet specs' readiness probes need.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fillImageRoot } from "./images.js";

const skip = process.getuid?.() !== 0 ? "chroot and unshare need root" : !existsSync("/usr/sbin/apache2") ? "apache2-bin is not installed" : false;

test("the httpd image's Apache starts with its configuration and keeps running", { skip }, async () => {
  const root = mkdtempSync(join(tmpdir(), "orch-conformance-httpd-test-"));
  try {
    fillImageRoot("httpd", root, "/nonexistent");
    // As the image runs it (httpd-foreground), with the error log in a file: no /proc in a bare chroot.
    const child = spawn("unshare", ["-n", "chroot", root, "/usr/sbin/apache2", "-f", "/etc/httpd.conf", "-c", "ErrorLog /tmp/error.log", "-DFOREGROUND"], { stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const early = await Promise.race([exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 2000))]);
    child.kill("SIGKILL");
    await exited;
    const log = existsSync(join(root, "tmp/error.log")) ? readFileSync(join(root, "tmp/error.log"), "utf8") : "";
    assert.equal(early, "running", `apache2 exited (${String(early)}): ${log}`);
    assert.doesNotMatch(log, /Configuration Failed|AH01597/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const UPSTREAM = process.env["UPSTREAM_SRC"] ?? "/work/upstream/src";
const noAgnhost = process.getuid?.() !== 0 ? "needs root" : !existsSync(join(UPSTREAM, "test/images/agnhost")) ? `no upstream tree at ${UPSTREAM}` : !existsSync("/usr/lib/go-1.19/bin/go") ? "no Go 1.19" : false;

test("the agnhost image has /agnhost-2, the name the entrypoint specs run", { skip: noAgnhost }, () => {
  const root = mkdtempSync(join(tmpdir(), "orch-conformance-agnhost-test-"));
  try {
    fillImageRoot("agnhost", root, UPSTREAM); // builds agnhost with Go from the upstream tree
    assert.equal(readlinkSync(join(root, "agnhost-2")), "agnhost");
    assert.ok(existsSync(join(root, "agnhost-2")), "the link resolves");
    assert.match(execFileSync("chroot", [root, "/usr/bin/curl", "--version"], { encoding: "utf8" }), /^curl \d/, "curl runs inside the image");
    // The service probe's command line, parsed by OpenBSD's netcat found on PATH by the image's shell (a refused port: exit 1, not a usage error).
    const probe = spawnSync("chroot", [root, "/bin/sh", "-c", "echo hostName | nc -v -t -w 1 127.0.0.1 1"], { encoding: "utf8" });
    assert.doesNotMatch(probe.stderr, /usage|invalid option|unrecognized/i, probe.stderr);
    assert.match(probe.stderr, /refused|failed/i, probe.stderr);

  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the kitten and nautilus images are agnhost's test-webserver serving their data.json and picture from /", { skip: noAgnhost }, () => {
  for (const name of ["kitten", "nautilus"]) {
    const root = mkdtempSync(join(tmpdir(), `orch-conformance-${name}-test-`));
    try {
      fillImageRoot(name, root, UPSTREAM);
      assert.ok(existsSync(join(root, "agnhost")));
      assert.deepEqual(JSON.parse(readFileSync(join(root, "data.json"), "utf8")), JSON.parse(readFileSync(join(UPSTREAM, "test/images", name, "html/data.json"), "utf8")));
      assert.ok(existsSync(join(root, `${name}.jpg`)));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

const noDig = process.getuid?.() !== 0 ? "chroot needs root" : !existsSync("/usr/bin/dig") ? "bind9-dnsutils (dig) is not installed on this machine" : false;

test("the busybox image's shell keeps environment names that are not identifiers (data-1), as upstream's busybox 1.29 does", { skip: process.getuid?.() !== 0 ? "chroot needs root" : false }, () => {
  const root = mkdtempSync(join(tmpdir(), "orch-conformance-busybox-test-"));
  try {
    fillImageRoot("busybox", root, "/nonexistent");
    const out = execFileSync("/usr/sbin/chroot", [root, "/bin/sh", "-c", "env"], { encoding: "utf8", env: { "data-1": "value-1", PATH: "/bin:/usr/bin" } });
    assert.match(out, /^data-1=value-1$/m);
    assert.match(execFileSync("chroot", [root, "/bin/sh", "-c", "ls / | wc -l"], { encoding: "utf8" }).trim(), /^\d+$/, "busybox's applets still answer");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the jessie-dnsutils image runs dig, nslookup and getent under its shell, as the DNS specs' prober does", { skip: noDig }, () => {
  const root = mkdtempSync(join(tmpdir(), "orch-conformance-dnsutils-test-"));
  try {
    fillImageRoot("jessie-dnsutils", root, "/nonexistent");
    const out = execFileSync("chroot", [root, "/bin/sh", "-c", "dig -v 2>&1; nslookup -version 2>&1; getent --version | head -1; for i in `seq 1 2`; do echo n$i; done"], { encoding: "utf8" });
    assert.match(out, /^DiG 9\./m);
    assert.match(out, /^nslookup 9\./m);
    assert.match(out, /^getent /m);
    assert.match(out, /^n2$/m);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the nonewprivs image's nnp is set-user-ID root and prints the effective uid", { skip: noAgnhost }, () => {
  const root = mkdtempSync(join(tmpdir(), "orch-conformance-nnp-test-"));
  try {
    fillImageRoot("nonewprivs", root, UPSTREAM);
    assert.equal(statSync(join(root, "usr/local/bin/nnp")).mode & 0o7777, 0o4755);
    assert.equal(execFileSync("/usr/sbin/chroot", [root, "/usr/local/bin/nnp"], { encoding: "utf8" }), "Effective uid: 0\n");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
