import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { HostCommands } from "./host-commands.js";

describe("HostCommands", () => {
  const commands = new HostCommands();
  const dir = mkdtempSync(join(tmpdir(), "orch-host-commands-"));
  const marker = join(dir, "started");
  after(() => {
    commands.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  });
  const waitFor = async (ok: () => boolean): Promise<void> => {
    while (!ok()) await new Promise((r) => setTimeout(r, 5));
  };

  test("runs argv without shell expansion, with stdin and environment; a failure carries its output", async () => {
    assert.deepEqual(await commands.run(["/bin/sh", "-c", 'read x; echo "[$x] [$K] [$1]"; exit 1', "sh", "$HOME `id`"], { input: "a 'b' $HOME", env: { K: "v 'w'" } }), { code: 1, output: "[a 'b' $HOME] [v 'w'] [$HOME `id`]" });
    assert.deepEqual(await commands.run(["true"]), { code: 0, output: "" });
    const failed = await commands.run(["/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"]);
    assert.equal(failed.code, 3);
    assert.equal(failed.output, "to-out\nto-err");
    assert.equal((await commands.run(["/nonexistent/command"])).code, 127);
  });

  test("commands run concurrently and each gets its own answer; finished ones are reaped", async () => {
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => commands.run(["/bin/sh", "-c", `sleep 0.3; exit ${i % 5}`])));
    assert.deepEqual(results.map((r) => r.code), Array.from({ length: 40 }, (_, i) => i % 5));
    assert.ok(performance.now() - t0 < 10_000, "not one after another (40 × 0.3 s)");
    await commands.run(["true"]);
    const zombies = execFileSync("ps", ["-e", "-o", "ppid=,stat="], { encoding: "utf8" }).split("\n").filter((l) => /Z/.test(l)).length;
    assert.ok(zombies < 10, `${zombies} zombie processes`);
  });

  test("a helper that died is replaced; what it had started still answers", async () => {
    const pending = commands.run(["sh", "-c", "touch \"$0\"; sleep 0.5", marker]);
    await waitFor(() => existsSync(marker)); // the shell has started it
    process.kill(commands.pid!, "SIGKILL");
    await waitFor(() => commands.pid === undefined); // noticed (commands sent before that are lost with it)
    assert.deepEqual(await commands.run(["sh", "-c", "exit 7"]), { code: 7, output: "" });
    assert.equal((await pending).code, 0);
  });
});
