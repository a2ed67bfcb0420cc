import { test } from "node:test";
import assert from "node:assert/strict";
import { ExecSetupError, execCommand, parseExecInfo } from "./exec-command.js";

const info = { pid: 4242, runtimeSpec: { process: { env: ["PATH=/bin", "A=1"], cwd: "/srv", user: { uid: 1000, gid: 100 } } } };

test("without a TTY: nsenter into every namespace and the root of the container's process, as its user, with its environment", () => {
  const c = execCommand(info, ["ls", "-l"], false);
  assert.match(c.file, /nsenter$/);
  assert.deepEqual(c.args, ["--target", "4242", "--pid", "--mount", "--uts", "--ipc", "--net", "--root", "--wd", "--setuid", "1000", "--setgid", "100", "--", "ls", "-l"]);
  assert.deepEqual(c.env, { PATH: "/bin", A: "1" });
});

test("with a TTY: script runs inside the PID namespace, the root is entered below it, TERM is set", () => {
  const c = execCommand({ ...info, runtimeSpec: { process: { env: ["PATH=/bin"] } } }, ["sh", "-c", "echo 'hi'"], true);
  assert.match(c.file, /nsenter$/);
  assert.deepEqual(c.args.slice(0, 8), ["--target", "4242", "--pid", "--uts", "--ipc", "--net", "--", c.args[7]]);
  assert.match(c.args[7]!, /script$/);
  assert.equal(c.args[8], "-qfec");
  assert.match(c.args[9]!, /^exec \S*env -i PATH=\/bin TERM=xterm \S*nsenter --target 4242 --mount --root --wd -- sh -c 'echo '\\''hi'\\'''$/);
});

test("a runtime without namespaces (embedded, not root): the command runs on the host in the container's directory", () => {
  const c = execCommand({ pid: 1, isolation: { namespaces: false }, runtimeSpec: { process: { env: ["X=y"], cwd: "/" } } }, ["true"], false);
  assert.deepEqual([c.file, c.args, c.env, c.cwd], ["true", [], { X: "y" }, "/"]);
});

test("no command, or no process id: a setup error", () => {
  assert.throws(() => execCommand(info, [], false), ExecSetupError);
  assert.throws(() => execCommand({}, ["ls"], false), /does not report the container's process id/);
});

test("parseExecInfo reads the verbose info map, and survives garbage", () => {
  assert.deepEqual(parseExecInfo({ info: '{"pid":7}' }), { pid: 7 });
  assert.deepEqual(parseExecInfo({ info: "{" }), {});
  assert.deepEqual(parseExecInfo(undefined), {});
});
