// Resizing an exec's terminal (channel 4): the pseudo-terminal belongs to
// `script`, a few processes below the one the agent spawned, whose child holds
// the slave side as its stdin; `stty -F` on that device sets the window size,
// and the kernel sends SIGWINCH to the program in the foreground, as a resize
// on a real terminal does.

import { execFile } from "node:child_process";
import { terminalOf } from "./process-tree.js";

/** Best effort: kubectl sends the first size as the command starts, so the terminal gets 200 ms to appear. */
export async function resizeTerminal(pid: number, size: { width: number; height: number }): Promise<void> {
  let tty: string | undefined;
  for (let tries = 0; tty === undefined && tries < 20; tries++) {
    if (tries > 0) await new Promise((r) => setTimeout(r, 10));
    tty = await terminalOf(pid);
  }
  if (tty === undefined) return; // no terminal (yet, or any more)
  await new Promise<void>((resolve) => execFile("stty", ["-F", tty, "cols", String(size.width), "rows", String(size.height)], () => resolve()));
}
