// Host watchdog integration (seed 001, "Limits"): under a service manager that
// sets NOTIFY_SOCKET and WATCHDOG_USEC, send READY=1 once started, then
// WATCHDOG=1 every half period while the agent is healthy (period ≥ 1 s).
// Node has no UNIX datagram sockets, so the datagrams go through systemd-notify.

import { spawn } from "node:child_process";

export const MIN_WATCHDOG_MS = 1_000;

export type Notifier = (state: string) => Promise<void>;

/** Sends one sd_notify message from this process (systemd-notify --pid claims our pid, for NotifyAccess=main). */
export function systemdNotifier(socket: string): Notifier {
  return (state) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn("systemd-notify", ["--no-block", `--pid=${process.pid}`, state], {
        env: { ...process.env, NOTIFY_SOCKET: socket },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`systemd-notify ${state} exited ${code}: ${stderr.trim()}`))));
    });
}

export interface WatchdogOptions {
  env?: NodeJS.ProcessEnv;
  /** Whether the agent is healthy right now; WATCHDOG=1 is sent only when it is. */
  healthy: () => boolean;
  signal: AbortSignal;
  log?: (line: string) => void;
  /** Default: systemd-notify on NOTIFY_SOCKET. */
  notifier?: Notifier;
}

export interface WatchdogHandle {
  /** The ping interval in ms, or undefined when the watchdog is off. */
  readonly intervalMs: number | undefined;
}

/** Sends READY=1 (when NOTIFY_SOCKET is set) and starts the pings (when WATCHDOG_USEC is set too). */
export function startWatchdog(options: WatchdogOptions): WatchdogHandle {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const socket = env.NOTIFY_SOCKET;
  if (!socket) return { intervalMs: undefined };
  const notify = options.notifier ?? systemdNotifier(socket);
  const send = (state: string) => notify(state).catch((err: Error) => log(`watchdog: ${err.message}`));
  void send("READY=1");

  const usec = Number(env.WATCHDOG_USEC ?? "0");
  // WATCHDOG_PID, when set, names the process the manager watches (sd_watchdog_enabled).
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== process.pid) return { intervalMs: undefined };
  if (!Number.isFinite(usec) || usec <= 0) return { intervalMs: undefined };
  const periodMs = usec / 1000;
  if (periodMs < MIN_WATCHDOG_MS) {
    log(`watchdog: WATCHDOG_USEC=${env.WATCHDOG_USEC} is below the ${MIN_WATCHDOG_MS} ms minimum; the watchdog stays off`);
    return { intervalMs: undefined };
  }
  const intervalMs = periodMs / 2;
  const timer = setInterval(() => {
    if (options.healthy()) void send("WATCHDOG=1");
    else log("watchdog: the agent is unhealthy; not sending WATCHDOG=1");
  }, intervalMs);
  timer.unref();
  options.signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  log(`watchdog: sending WATCHDOG=1 every ${intervalMs} ms`);
  return { intervalMs };
}
