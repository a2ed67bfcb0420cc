// Short host commands of the embedded runtime (ip, iptables, CNI plugins) run
// through one long-lived /bin/sh instead of being spawned by Node: a spawn
// forks the agent's whole process, which blocks its event loop 5–10 ms at
// 100–200 MiB (page tables are copied), while the small shell forks in a
// fraction of a millisecond. Commands run concurrently; each answers with its
// exit code and, when it failed, its output (stdout and stderr together).

import { spawn, type ChildProcessByStdio } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { shQuote } from "./launcher.js";

export interface CommandResult {
  code: number;
  /** stdout and stderr of a failed command; "" when it succeeded. */
  output: string;
}

export interface CommandOptions {
  /** Written to the command's stdin. */
  input?: string;
  /** Added to the helper's environment (PATH only) for this command. */
  env?: Record<string, string>;
}

interface Shell {
  child: ChildProcessByStdio<Writable, Readable, null>;
  /** Commands sent to this shell and not answered yet, by number. */
  pending: Map<number, { resolve: (r: CommandResult) => void; reject: (e: Error) => void }>;
  buffer: string;
}

export class HostCommands {
  #shell: Shell | undefined;
  #next = 0;

  /** Runs `argv` (no shell expansion) and resolves with how it ended; rejects only when the helper itself fails. */
  run(argv: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
    const shell = (this.#shell ??= this.#start());
    const id = ++this.#next;
    const eof = `ORCH_INPUT_${id}_${randomBytes(6).toString("hex")}`;
    const env = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${shQuote(v)}`).join(" ");
    // `jobs` reaps the finished background commands (dash leaves them as zombies otherwise);
    // each answer is one line under PIPE_BUF, so concurrent answers never interleave.
    const line = [
      `jobs >/dev/null; ( out=$(${env} ${argv.map(shQuote).join(" ")} 2>&1 <<'${eof}'`,
      options.input ?? "",
      eof,
      `); c=$?; if [ $c -ne 0 ]; then out=$(printf %s "$out" | head -c 3000 | base64 -w0); else out=; fi; echo "${id} $c $out" ) &`,
      "",
    ].join("\n");
    return new Promise((resolve, reject) => {
      shell.pending.set(id, { resolve, reject });
      (shell.child.stdout as Socket).ref(); // busy: keep the process alive for the answer
      shell.child.stdin.write(line);
    });
  }

  /** The helper shell's PID while it runs. */
  get pid(): number | undefined {
    return this.#shell?.child.pid;
  }

  /** Ends the helper (commands under way finish and answer on their own). */
  close(): void {
    this.#shell?.child.stdin.end();
    this.#shell = undefined;
  }

  #start(): Shell {
    const child = spawn("/bin/sh", [], { stdio: ["pipe", "pipe", "ignore"], env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
    const shell: Shell = { child, pending: new Map(), buffer: "" };
    child.unref();
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      shell.buffer += chunk;
      for (let i = shell.buffer.indexOf("\n"); i >= 0; i = shell.buffer.indexOf("\n")) {
        const [id, code, out] = shell.buffer.slice(0, i).split(" ");
        shell.buffer = shell.buffer.slice(i + 1);
        const waiter = shell.pending.get(Number(id));
        shell.pending.delete(Number(id));
        waiter?.resolve({ code: Number(code), output: Buffer.from(out ?? "", "base64").toString("utf8").trim() });
      }
      // Idle: the helper must not keep the process alive.
      if (shell.pending.size === 0) (child.stdout as Socket).unref();
    });
    // A dead shell takes no more commands; those it started still answer (they are processes of
    // their own) until the last one closes the pipe: whatever is unanswered then never will be.
    const dead = (): void => {
      if (this.#shell === shell) this.#shell = undefined;
    };
    child.once("exit", dead);
    child.once("error", dead);
    child.stdout.once("close", () => {
      dead();
      for (const w of shell.pending.values()) w.reject(new Error("the host command helper (/bin/sh) ended before the command answered"));
      shell.pending.clear();
    });
    child.stdin.on("error", () => {}); // a dead helper: handled above
    return shell;
  }
}
/** One helper per process: every runtime in it shares the shell. */
export const hostCommands = new HostCommands();
