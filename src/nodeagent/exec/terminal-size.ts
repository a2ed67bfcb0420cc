// Resizing an exec's terminal (channel 4): the pseudo-terminal belongs to
// `script`, whose child holds the slave side as its stdin; `stty -F` on that
// device sets the window size, and the kernel sends SIGWINCH to the program in
// the foreground, as a resize on a real terminal does.

import { execFile } from "node:child_process";
import { readFile, readlink } from "node:fs/promises";

/** Best effort: kubectl sends the first size as the command starts, so the terminal gets 200 ms to appear. */
export async function resizeTerminal(scriptPid: number, size: { width: number; height: number }): Promise<void> {
  try {
    let tty = "";
    for (let tries = 0; !tty.startsWith("/dev/pts/") && tries < 20; tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, 10));
      const child = (await readFile(`/proc/${scriptPid}/task/${scriptPid}/children`, "utf8")).trim().split(/\s+/)[0];
      if (child) tty = await readlink(`/proc/${child}/fd/0`).catch(() => "");
    }
    if (!tty.startsWith("/dev/pts/")) return;
    await new Promise<void>((resolve) => execFile("stty", ["-F", tty, "cols", String(size.width), "rows", String(size.height)], () => resolve()));
  } catch {
    // no terminal (yet, or any more)
  }
}
