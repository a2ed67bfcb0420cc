// The agent's lock file (seed 001, "Local files", --lock-file): an flock(2)
// held for the agent's lifetime by a child `flock` process (Node has no flock),
// so a second agent on the same file fails at once with a clear error. With
// --exit-on-lock-contention, the holder exits when another agent asks for it.

import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, utimesSync, watch, type FSWatcher } from "node:fs";

export class LockContentionError extends Error {}

export interface LockFileOptions {
  path: string;
  /** Wait for the holder to let go (it is told by a touch of the file) instead of failing. */
  wait?: boolean;
  /** Called when another agent asks for the lock (for --exit-on-lock-contention). */
  onContention?: () => void;
}

export interface HeldLock {
  release(): Promise<void>;
}

const CONFLICT = 75;

/** Takes the lock or rejects with LockContentionError naming the file. */
export async function acquireLockFile(options: LockFileOptions): Promise<HeldLock> {
  closeSync(openSync(options.path, "a", 0o600));
  if (options.wait) {
    // Tell a holder started with --exit-on-lock-contention that we want the lock.
    const now = new Date();
    utimesSync(options.path, now, now);
  }
  // `flock FILE cat` holds the lock until its stdin (our pipe) closes, that is until we exit or release.
  const hold = [options.path, "sh", "-c", "echo locked; exec cat"];
  const args = options.wait ? hold : ["--nonblock", "--conflict-exit-code", String(CONFLICT), ...hold];
  const child: ChildProcess = spawn("flock", args, { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.once("error", (err) => reject(new Error(`cannot run flock for the lock file ${options.path}: ${err.message}`)));
    child.once("exit", (code) =>
      reject(
        code === CONFLICT
          ? new LockContentionError(`the lock file ${options.path} is held by another node agent; only one agent may run on a node (use a different --lock-file, or stop the other agent)`)
          : new Error(`lock file ${options.path}: flock exited with ${code}`),
      ),
    );
    child.stdout!.once("data", () => resolve());
  });
  child.removeAllListeners("exit");
  let watcher: FSWatcher | undefined;
  if (options.onContention) {
    const onContention = options.onContention;
    // Skip our own touch (if any) by starting to watch only now.
    watcher = watch(options.path, () => onContention());
  }
  return {
    async release() {
      watcher?.close();
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      child.stdin!.end();
      await gone;
    },
  };
}
