// The agent's lock file (seed 001, "Local files", --lock-file): an flock(2)
// held for the agent's lifetime by a child `flock` process (Node has no flock).
// Without `wait` a second agent fails at once with a clear error; with it (the
// agent's --exit-on-lock-contention) it opens and touches the file and waits,
// and a holder with onContention lets go when another process opens the file,
// as upstream (inotify IN_OPEN|IN_DELETE_SELF, through a child `inotifywait`:
// Node cannot ask inotify for opens; the kernel reports DELETE_SELF only once
// the last open of the file closes, so not while our flock holds it). Without inotifywait the
// holder falls back to fs.watch, which hears the touch but not a plain open.

import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, closeSync, constants, openSync, utimesSync, watch, type FSWatcher } from "node:fs";
import { delimiter, join } from "node:path";

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
  /** Where inotifywait is looked for (default $PATH). */
  searchPath?: string;
  /** Says how contention is watched for (and why a fallback, when inotifywait is missing or fails). */
  log?: (line: string) => void;
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
  let watcher: { close(): void } | undefined;
  if (options.onContention) {
    const onContention = options.onContention;
    const log = options.log ?? (() => {});
    // Started only now, after our own opens (the one above and flock's), so every event is another process's.
    const opens = await watchOpens(options.path, options.searchPath ?? process.env["PATH"] ?? "", onContention);
    if ("close" in opens) {
      watcher = opens;
      log(`nodeagent: watching the lock file ${options.path} for another process's open (inotifywait)`);
    } else {
      log(`nodeagent: ${opens.unavailable}; watching the lock file ${options.path} for changes only (a contender must touch it; a plain open is not noticed)`);
      watcher = watchChanges(options.path, onContention);
    }
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

/** The first executable `name` in the folders of `searchPath`. */
function findExecutable(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Calls `onEvent` once when another process opens `path` (or its inode goes), through `inotifywait -m -e
 * open,delete_self`. Resolves once its watch is established, or with why it cannot watch. The helper runs
 * under `sh` beside a `cat` on our pipe, so it ends with us even when we are killed.
 */
async function watchOpens(path: string, searchPath: string, onEvent: () => void): Promise<{ close(): void } | { unavailable: string }> {
  const binary = findExecutable("inotifywait", searchPath);
  if (binary === undefined) return { unavailable: "inotifywait not found on PATH (Debian's inotify-tools)" };
  const script = '"$0" -m -e open,delete_self --format %e "$1" & pid=$!; cat >/dev/null; kill $pid 2>/dev/null';
  const child = spawn("sh", ["-c", script, binary, path], { stdio: ["pipe", "pipe", "pipe"] });
  child.stdin!.on("error", () => {}); // the helper gone first: nothing left to stop
  let stderr = "";
  const established = await new Promise<true | string>((resolve) => {
    child.once("error", (err) => resolve(`cannot run inotifywait: ${err.message}`));
    child.once("exit", () => resolve(`inotifywait failed: ${stderr.trim() || "exited before watching"}`));
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (/Watches established/.test(stderr)) resolve(true);
    });
  });
  child.stderr!.removeAllListeners("data");
  child.stderr!.resume();
  child.removeAllListeners("exit");
  if (established !== true) {
    child.stdin!.end();
    return { unavailable: established };
  }
  let done = false;
  const close = () => {
    done = true;
    if (child.exitCode === null && child.signalCode === null) child.stdin!.end();
  };
  child.stdout!.on("data", () => {
    if (done) return;
    close();
    onEvent();
  });
  return { close };
}

/** The fallback without inotifywait: fs.watch hears a change of the file's times or content (a touch), not an open. */
function watchChanges(path: string, onEvent: () => void): { close(): void } {
  const watcher: FSWatcher = watch(path, () => {
    watcher.close();
    onEvent();
  });
  // A watch that fails (the file removed) cannot hear contention any more; the lock itself still holds.
  watcher.on("error", () => watcher.close());
  return watcher;
}
