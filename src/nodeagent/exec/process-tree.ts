// The processes an exec started, found through /proc: nsenter forks to enter
// a PID namespace and script forks for its terminal, so the command runs a few
// levels below the process the agent spawned. Used to end an exec whose client
// went away (as containerd kills an exec when its stream closes) and to find
// its terminal for a resize.

import { readFile, readlink } from "node:fs/promises";

/** `pid` and the processes below it, breadth first, at most `depth` levels down. */
export async function processTree(pid: number, depth = 6): Promise<number[]> {
  const all = [pid];
  let level = [pid];
  for (let d = 0; d < depth && level.length > 0; d++) {
    const next: number[] = [];
    for (const p of level) {
      const children = await readFile(`/proc/${p}/task/${p}/children`, "utf8").catch(() => "");
      for (const c of children.split(/\s+/)) if (c !== "") next.push(Number(c));
    }
    all.push(...next);
    level = next;
  }
  return all;
}

/** SIGKILLs `pid` and everything below it (the ones below first seen, then all at once, so none is reparented unseen). */
export async function killTree(pid: number): Promise<void> {
  for (const p of (await processTree(pid)).reverse()) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

/** The terminal of the first process in `pid`'s tree whose stdin is one. */
export async function terminalOf(pid: number): Promise<string | undefined> {
  for (const p of await processTree(pid, 4)) {
    const stdin = await readlink(`/proc/${p}/fd/0`).catch(() => "");
    if (stdin.startsWith("/dev/pts/")) return stdin;
  }
  return undefined;
}
