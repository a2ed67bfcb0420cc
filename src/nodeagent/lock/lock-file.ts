// The agent's lock file (seed 001, "Local files", --lock-file): an flock(2)
// held for the agent's lifetime by a child `flock` process (Node has no flock).
// Without `wait` a second agent fails at once with a clear error; with it (the
// agent's --exit-on-lock-contention) it touches the file and waits, and a holder
// with onContention hears the touch through inotify (fs.watch) and lets go.

import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, utimesSync, watch, type FSWatcher } from "node:fs";

export class LockContentionError extends Error {
  /** `yielded`: we held the lock and gave it up when asked (a clean end), rather than never getting it. */
  constructor(message: string, readonly yielded = false) {
    super(message);
  }
}

export interface LockFileOptions {
  path: string;
  /** Wait for the holder to let go (it is told by a touch of the file) instead of failing. */
  wait?: boolean;
  /** Called once when another agent asks for the lock (for --exit-on-lock-contention). */
  onContention?: () => void;
  /** Gives up a wait (rejects with the signal's reason). */
  signal?: AbortSignal;
}

export interface HeldLock {
  release(): Promise<void>;
}

const CONFLICT = 75;

/** Takes the lock or rejects with LockContentionError naming the file. */
export async function acquireLockFile(options: LockFileOptions): Promise<HeldLock> {
  options.signal?.throwIfAborted();
  closeSync(openSync(options.path, "a", 0o600));
  if (options.wait) {
    // Tell a holder started with --exit-on-lock-contention that we want the lock: Node's
    // fs.watch (inotify) reports attribute changes but not a bare open(2), so we touch the file.
    const now = new Date();
    utimesSync(options.path, now, now);
  }
  // `flock FILE cat` holds the lock until its stdin (our pipe) closes, that is until we exit or release.
  const hold = [options.path, "sh", "-c", "echo locked; exec cat"];
  const args = options.wait ? hold : ["--nonblock", "--conflict-exit-code", String(CONFLICT), ...hold];
  const child: ChildProcess = spawn("flock", args, { stdio: ["pipe", "pipe", "inherit"] });
  const giveUp = () => child.kill("SIGKILL");
  options.signal?.addEventListener("abort", giveUp, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once("error", (err) => reject(new Error(`cannot run flock for the lock file ${options.path}: ${err.message}`)));
      child.once("exit", (code) =>
        reject(
          options.signal?.aborted
            ? options.signal.reason
            : code === CONFLICT
              ? new LockContentionError(`the lock file ${options.path} is held by another node agent; only one agent may run on a node (use a different --lock-file, or stop the other agent)`)
              : new Error(`lock file ${options.path}: flock exited with ${code}`),
        ),
      );
      child.stdout!.once("data", () => resolve());
    });
  } finally {
    options.signal?.removeEventListener("abort", giveUp);
  }
  child.removeAllListeners("exit");
  let watcher: FSWatcher | undefined;
  if (options.onContention) {
    const onContention = options.onContention;
    // Started only now, so our own touch (if any) is not heard; a contender's touch is.
    watcher = watch(options.path, () => {
      watcher?.close();
      onContention();
    });
    // A watch that fails (the file removed) cannot hear contention any more; the lock itself still holds.
    watcher.on("error", () => watcher?.close());
  }
  return {
    async release() {
      watcher?.close();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      child.stdin!.end();
      await gone;
    },
  };
}
