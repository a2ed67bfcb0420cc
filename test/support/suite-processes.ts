// Containers of the embedded runtime are host processes: an e2e suite marks
// its containers' commands with a number of its own and, at its end, ends
// those still left (by pid, found with pgrep on that mark).

import { execFile } from "node:child_process";

/** A number no other process on the machine uses, from `base` and this process's pid. */
export function suiteToken(base: number): string {
  return String(base + (process.pid % 100_000));
}

/** The processes whose command line matches `pattern` (pgrep -f). */
export function pidsMatching(pattern: string): Promise<number[]> {
  return new Promise((resolve) => execFile("pgrep", ["-f", pattern], (_e, out) => resolve(out.split("\n").filter((l) => l !== "").map(Number))));
}

/** SIGKILLs every process whose command line matches `pattern`. */
export async function killMatching(pattern: string): Promise<void> {
  for (const pid of await pidsMatching(pattern)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
