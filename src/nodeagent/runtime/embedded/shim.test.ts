// The container shim on its own (no runtime, no root): its CRI records are the
// ones CriLogWriter writes for the same output, it follows a rotated log path,
// records the exit status, relays `ok` and reports a command that cannot start.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { after, test } from "node:test";
import { CriLogWriter, MAX_LOG_LINE, parseLogRecord } from "../../cri/log-format.js";
import { waitFor } from "../../cri/testing/wait.js";
import { PERL, installShim, recordedExit } from "./shim.js";

const dir = mkdtempSync(join(tmpdir(), "orch-shim-"));
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10 }));
const skip = PERL === undefined ? "perl not installed" : undefined;

/** Runs `script` under the shim as the runtime does, with Perl's warnings and strict on; resolves with what came on fd 3 and the shim's exit. */
function runShim(name: string, script: string, cgroupProcs: string[] = [], flags: string[] = []): { control: Promise<string>; exited: Promise<number | null>; log: string; dir: string } {
  const shim = installShim(dir);
  const cdir = join(dir, name);
  mkdirSync(cdir, { recursive: true });
  const log = join(dir, `${name}.log`);
  const child = spawn(PERL!, ["-w", "-Mstrict", shim, cdir, log, ...flags, ...cgroupProcs, "--", "/bin/sh", "-c", script], { stdio: ["ignore", "ignore", "pipe", "pipe"] });
  const fd3 = child.stdio[3] as Readable;
  let text = "";
  let warnings = "";
  fd3.on("data", (d: Buffer) => (text += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (warnings += d.toString()));
  return {
    control: new Promise((resolve) => fd3.once("close", () => resolve(text))),
    exited: new Promise((resolve) => child.once("close", (code) => {
      assert.equal(warnings, "", "the shim runs clean under perl -w -Mstrict");
      resolve(code);
    })),
    log,
    dir: cdir,
  };
}

const records = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => {
  const r = parseLogRecord(l);
  assert.ok(r !== undefined, `a CRI record: ${l.slice(0, 80)}`);
  assert.match(r.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
  return { stream: r.stream, partial: r.partial, content: r.content };
});

test("the shim writes the records CriLogWriter writes for the same output: long lines cut, a last line without newline partial", { skip }, async () => {
  const long = "x".repeat(MAX_LOG_LINE * 2 + 5);
  const script = `echo "ok $$" >&3; exec 3>&-; echo one; echo oops >&2; printf '%s\\n' '${long}'; printf 'no newline'; exit 3`;
  const run = runShim("same", script);
  assert.match(await run.control, /^ok \d+\n$/);
  assert.equal(await run.exited, 3);
  // The same output through CriLogWriter (stderr after stdout's first line, as the shell wrote it).
  const expected = join(dir, "expected.log");
  const w = new CriLogWriter(expected);
  w.write("stdout", "one\n");
  w.write("stderr", "oops\n");
  w.write("stdout", `${long}\nno newline`);
  await w.close();
  const sort = (rs: ReturnType<typeof records>) => [...rs.filter((r) => r.stream === "stdout"), ...rs.filter((r) => r.stream === "stderr")];
  assert.deepEqual(sort(records(readFileSync(run.log, "utf8"))), sort(records(readFileSync(expected, "utf8"))));
  assert.equal(recordedExit(run.dir)?.code, 3);
});

test("a rotated log path is reopened by the shim: lines after the rename go to a new file", { skip }, async () => {
  const flag = join(dir, "rot", "rotated");
  const run = runShim("rot", `echo "ok $$" >&3; exec 3>&-; echo before; while [ ! -e ${flag} ]; do sleep 0.02; done; echo after`);
  await run.control;
  await waitFor("the first line", () => (existsSync(run.log) && readFileSync(run.log, "utf8").includes("before") ? true : undefined));
  renameSync(run.log, `${run.log}.1`);
  writeFileSync(flag, "");
  assert.equal(await run.exited, 0);
  assert.deepEqual(records(readFileSync(run.log, "utf8")).map((r) => r.content), ["after"]);
  assert.deepEqual(records(readFileSync(`${run.log}.1`, "utf8")).map((r) => r.content), ["before"]);
});

test("a command that ends before saying ok: the shim reports why, with its stderr, and its status", { skip }, async () => {
  const run = runShim("early", "echo setup went wrong >&2; exit 125");
  assert.equal((await run.control).trim(), "error the container's shim exited with 125 before the command started: setup went wrong");
  assert.equal(await run.exited, 125);
  assert.ok(!existsSync(run.log) || !readFileSync(run.log, "utf8").includes("setup went wrong"), "a failed start writes nothing to the container's log");
  const said = runShim("said", "echo 'error overlay mount of the image failed' >&3; exit 125");
  assert.equal((await said.control).trim(), "error overlay mount of the image failed");
});

test("a signal ends the command with 128+signal, recorded; the command leads a process group of its own", { skip }, async () => {
  const run = runShim("sig", `echo "ok $$" >&3; exec 3>&-; exec sleep 300`);
  const pid = Number(/^ok (\d+)/.exec(await run.control)![1]);
  process.kill(-pid, "SIGTERM"); // the group, as the runtime signals a container without namespaces
  assert.equal(await run.exited, 143);
  assert.equal(recordedExit(run.dir)?.code, 143);
});

test("the command joins the cgroups first (the shim writes 0 to each cgroup.procs); a join that fails is the start's error", { skip }, async () => {
  const procs = join(dir, "cgroup.procs");
  writeFileSync(procs, "");
  const run = runShim("join", `echo "ok $$" >&3; exec 3>&-; exit 0`, [procs]);
  assert.match(await run.control, /^ok \d+\n$/);
  assert.equal(readFileSync(procs, "utf8"), "0\n");
  const refused = runShim("refused", `echo "ok $$" >&3`, [join(dir, "no", "such", "cgroup.procs")]);
  assert.equal((await refused.control).trim(), `error joining cgroup ${join(dir, "no", "such", "cgroup.procs")}: No such file or directory`);
  assert.equal(await refused.exited, 125);
});

/** One frame for the shim's attach socket: type, 4-byte length, payload. */
const frame = (type: number, payload: Buffer | string = ""): Buffer => {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
};
const attach = async (cdir: string) => {
  await waitFor("the attach socket", () => (existsSync(join(cdir, "attach.sock")) ? true : undefined));
  const s = connect(join(cdir, "attach.sock"));
  s.on("error", () => {});
  await new Promise((r) => s.once("connect", r));
  return s;
};
const logText = (log: string) => (existsSync(log) ? records(readFileSync(log, "utf8")).map((r) => r.content).join("\n") : "");

test("+stdin: input sent on the attach socket reaches the command; a client going away leaves stdin open; +once ends it when the first client goes", { skip }, async () => {
  const run = runShim("in", `echo "ok $$" >&3; exec 3>&-; while read -r l; do echo "got $l"; done; echo eof`, [], ["+stdin"]);
  await run.control;
  const first = await attach(run.dir);
  first.write(frame(0, "one\n"));
  await waitFor("one echoed", () => (logText(run.log).includes("got one") ? true : undefined));
  first.end();
  const second = await attach(run.dir);
  second.write(frame(0, "two\n"));
  await waitFor("two echoed", () => (logText(run.log).includes("got two") ? true : undefined));
  assert.ok(!logText(run.log).includes("eof"), "detaching does not end stdin without +once");
  second.write(frame(2));
  second.end();
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(!logText(run.log).includes("eof"), "the end of a client's input does not end stdin without +once");

  const once = runShim("once", `echo "ok $$" >&3; exec 3>&-; while read -r l; do echo "got $l"; done; echo eof`, [], ["+stdin", "+once"]);
  await once.control;
  const c = await attach(once.dir);
  c.write(frame(0, "only\n"));
  await waitFor("only echoed", () => (logText(once.log).includes("got only") ? true : undefined));
  c.end();
  assert.equal(await once.exited, 0);
  assert.deepEqual(logText(once.log).split("\n"), ["got only", "eof"]);
  assert.ok(!existsSync(join(once.dir, "attach.sock")), "the socket goes with the command");
  process.kill(-Number(/^ok (\d+)/.exec(await run.control)![1]), "SIGTERM");
  await run.exited;
});

test("+tty: the command has a terminal as stdin and stdout; a size frame sets its size (stty size)", { skip }, async () => {
  const run = runShim("tty", `echo "ok $$" >&3; exec 3>&-; [ -t 0 ] && [ -t 1 ] && echo terminal; while read -r l; do echo "size $(stty size)"; done`, [], ["+stdin", "+tty"]);
  await run.control;
  const c = await attach(run.dir);
  const size = Buffer.alloc(4);
  size.writeUInt16BE(91, 0);
  size.writeUInt16BE(17, 2);
  c.write(frame(1, size));
  c.write(frame(0, "x\r"));
  await waitFor("the size", () => (logText(run.log).includes("size 17 91") ? true : undefined));
  assert.match(logText(run.log), /terminal/);
  c.end();
  process.kill(-Number(/^ok (\d+)/.exec(await run.control)![1]), "SIGKILL");
  await run.exited;
});
