import { test } from "node:test";
import assert from "node:assert/strict";
import { agentExecQuery } from "./pod-exec.js";

test("PodExecOptions become the agent's parameters (stdin → input, stdout → output, stderr → error)", () => {
  const q = agentExecQuery(new URLSearchParams("command=sh&command=-c&command=echo+hi&stdin=true&stdout=true&tty=true&container=c"));
  assert.equal(q.toString(), "command=sh&command=-c&command=echo+hi&input=1&output=1&tty=1");
});

test("a command and at least one stream are required, with upstream's messages", () => {
  assert.throws(() => agentExecQuery(new URLSearchParams("stdout=true")), /you must specify at least one command for the container/);
  assert.throws(() => agentExecQuery(new URLSearchParams("command=ls")), /you must specify at least 1 of stdin, stdout, stderr/);
});
