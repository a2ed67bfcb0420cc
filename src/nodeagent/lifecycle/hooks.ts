// Container lifecycle hooks (upstream's postStart and preStop): exec through
// the runtime's ExecSync, httpGet against the pod IP, or sleep. postStart runs
// right after StartContainer and must succeed, or the container is killed;
// preStop runs before StopContainer, inside the termination grace period.

import type { Container, LifecycleHandler, Pod } from "../../api/core/types.js";
import { runProbe, type ProbeTarget } from "../probes/probe.js";

export type HookKind = "PostStart" | "PreStop";

export interface HookOutcome {
  ok: boolean;
  /** Why it failed, worded as upstream's hook errors. */
  message: string;
}

export function hookOf(c: Container, kind: HookKind): LifecycleHandler | undefined {
  const h = kind === "PostStart" ? c.lifecycle?.postStart : c.lifecycle?.preStop;
  return h ?? undefined;
}

/**
 * Runs one hook. `deadlineSeconds` bounds it: the remaining grace period for
 * preStop; postStart has no deadline upstream, so callers pass a long one.
 */
export async function runHook(kind: HookKind, handler: LifecycleHandler, target: ProbeTarget & { pod: Pod }, deadlineSeconds: number): Promise<HookOutcome> {
  const where = `for Container "${target.container.name}" in Pod "${target.pod.metadata.name}_${target.pod.metadata.namespace ?? "default"}(${target.pod.metadata.uid})"`;
  if (handler.sleep) {
    const ms = Math.min(Math.max(0, handler.sleep.seconds ?? 0), deadlineSeconds) * 1000;
    await new Promise((r) => setTimeout(r, ms).unref?.());
    return { ok: true, message: "" };
  }
  if (handler.exec) {
    const command = handler.exec.command ?? [];
    const r = await runProbe({ exec: handler.exec, timeoutSeconds: deadlineSeconds }, target);
    return r.ok ? { ok: true, message: "" } : { ok: false, message: `Exec lifecycle hook (${JSON.stringify(command)}) ${where} failed - error: command '${command.join(" ")}' failed, message: ${JSON.stringify(r.output)}` };
  }
  if (handler.httpGet) {
    const r = await runProbe({ httpGet: handler.httpGet, timeoutSeconds: deadlineSeconds }, target);
    return r.ok ? { ok: true, message: "" } : { ok: false, message: `HTTP lifecycle hook (${handler.httpGet.path ?? "/"}) ${where} failed - error: ${r.output}` };
  }
  // tcpSocket stays in the API for compatibility only; upstream fails such hooks when they run.
  return { ok: false, message: `${kind} hook ${where} failed - error: tcpSocket is not supported as a lifecycle handler (use exec, httpGet or sleep)` };
}
