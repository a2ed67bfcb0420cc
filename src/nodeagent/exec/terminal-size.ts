// Resizing an exec's terminal (channel 4): the pseudo-terminal belongs to
// `script`, a few processes below the one the agent spawned, whose child holds
// the slave side as its stdin; `stty -F` on that device sets the window size,
// and the kernel sends SIGWINCH to the program in the foreground, as a resize
// on a real terminal does.

import { execFile } from "node:child_process";
import { readFile, readlink } from "node:fs/promises";

/** The terminal of the first process below `pid` whose stdin is one (a breadth-first walk, a few levels deep). */
async function terminalBelow(pid: number): Promise<string | undefined> {
  let level = [String(pid)];
  for (let depth = 0; depth < 4 && level.length > 0; depth++) {
    const next: string[] = [];
    for (const p of level) {
      const stdin = await readlink(`/proc/${p}/fd/0`).catch(() => "");
      if (stdin.startsWith("/dev/pts/")) return stdin;
      const children = await readFile(`/proc/${p}/task/${p}/children`, "utf8").catch(() => "");
      next.push(...children.split(/\s+/).filter((c) => c !== ""));
    }
    level = next;
  }
  return undefined;
}

/** Best effort: kubectl sends the first size as the command starts, so the terminal gets 200 ms to appear. */
export async function resizeTerminal(pid: number, size: { width: number; height: number }): Promise<void> {
  let tty: string | undefined;
  for (let tries = 0; tty === undefined && tries < 20; tries++) {
    if (tries > 0) await new Promise((r) => setTimeout(r, 10));
    tty = await terminalBelow(pid);
  }
  if (tty === undefined) return; // no terminal (yet, or any more)
  await new Promise<void>((resolve) => execFile("stty", ["-F", tty, "cols", String(size.width), "rows", String(size.height)], () => resolve()));
}
