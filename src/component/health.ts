// Health checks and the /healthz, /livez, /readyz endpoints (upstream's
// apiserver/pkg/server/healthz): named checks, `?verbose`, `?exclude=NAME`,
// `/<endpoint>/NAME` per check, and the SLI metrics of every run (seed 002,
// "Health indicator metrics": orch_healthcheck, orch_healthchecks_total).

import type { Counter, Gauge, MetricsRegistry } from "./metrics/index.js";

export interface HealthCheck {
  readonly name: string;
  /** Resolves when healthy; throws (or rejects) with the reason otherwise. */
  check(): void | Promise<void>;
}

export type HealthEndpoint = "healthz" | "livez" | "readyz";

export interface HealthChecksOptions {
  /** Checks on /livez (and /healthz). `ping` and `log` are always there. */
  readonly live?: readonly HealthCheck[];
  /** Checks only on /readyz (and /healthz): informer-sync, etcd-readiness, ... */
  readonly ready?: readonly HealthCheck[];
  /** Where the SLI metrics go (the /metrics/slis registry). */
  readonly sliRegistry?: MetricsRegistry;
  /** Metric prefix, "orch_" (src/machinery/naming.ts). */
  readonly metricPrefix?: string;
}

export interface HealthAnswer {
  readonly status: 200 | 404 | 500;
  readonly body: string;
}

/** `ping`: always healthy, so the endpoint itself is known to answer. */
export const pingCheck: HealthCheck = { name: "ping", check() {} };

/**
 * `log`: fails when a log write has been blocked for more than a minute (upstream's
 * LogHealthz); here, when stderr has had more than 64 MiB queued for as long.
 */
export function logCheck(stream: { writableLength?: number } = process.stderr): HealthCheck {
  let backedUpSince: number | undefined;
  return {
    name: "log",
    check() {
      if ((stream.writableLength ?? 0) < 64 << 20) {
        backedUpSince = undefined;
        return;
      }
      backedUpSince ??= Date.now();
      if (Date.now() - backedUpSince > 60_000) throw new Error("logging blocked for more than 1m");
    },
  };
}

/** A check from a predicate: healthy while `ok()` is true, else fails with `reason`. */
export function conditionCheck(name: string, ok: () => boolean, reason: string): HealthCheck {
  return {
    name,
    check() {
      if (!ok()) throw new Error(reason);
    },
  };
}

export class HealthChecks {
  readonly #live: HealthCheck[];
  readonly #ready: HealthCheck[];
  readonly #gauge: Gauge | undefined;
  readonly #total: Counter | undefined;

  constructor(options: HealthChecksOptions = {}) {
    this.#live = [pingCheck, logCheck()];
    this.#ready = [];
    for (const c of options.live ?? []) this.addLive(c);
    for (const c of options.ready ?? []) this.addReady(c);
    const prefix = options.metricPrefix ?? "orch_";
    if (options.sliRegistry !== undefined) {
      this.#gauge = options.sliRegistry.gauge({
        name: `${prefix}healthcheck`, stabilityLevel: "STABLE", labelNames: ["name", "type"],
        help: "This metric records the result of a single healthcheck.",
      });
      this.#total = options.sliRegistry.counter({
        name: `${prefix}healthchecks_total`, stabilityLevel: "STABLE", labelNames: ["name", "status", "type"],
        help: "This metric records the results of all healthcheck.",
      });
    }
  }

  /** A check for liveness (and so readiness and /healthz too). Replaces one of the same name. */
  addLive(check: HealthCheck): void {
    replace(this.#live, check);
  }

  /** A check for readiness (and /healthz) only. */
  addReady(check: HealthCheck): void {
    replace(this.#ready, check);
  }

  checks(endpoint: HealthEndpoint): readonly HealthCheck[] {
    return endpoint === "livez" ? this.#live : [...this.#live, ...this.#ready];
  }

  /**
   * Answers `/<endpoint>` (sub = undefined) or `/<endpoint>/<sub>`, with upstream's
   * bodies: "ok"; verbose "[+]name ok" lines then "<endpoint> check passed"; on
   * failure every line and "<endpoint> check failed" with 500.
   */
  async answer(endpoint: HealthEndpoint, sub: string | undefined, query: URLSearchParams): Promise<HealthAnswer> {
    const checks = this.checks(endpoint);
    if (sub !== undefined && sub !== "") {
      const check = checks.find((c) => c.name === sub);
      if (check === undefined) return { status: 404, body: "404 page not found\n" };
      const err = await this.#run(check, endpoint);
      return err === undefined ? { status: 200, body: "ok" } : { status: 500, body: `internal server error: ${err}\n` };
    }
    const excluded = new Set(query.getAll("exclude").flatMap((e) => e.split(",")).filter((e) => e !== ""));
    const verbose = query.has("verbose");
    const lines: string[] = [];
    let failed = false;
    const results = await Promise.all(checks.map((c) => (excluded.has(c.name) ? Promise.resolve("excluded" as const) : this.#run(c, endpoint))));
    checks.forEach((c, i) => {
      const r = results[i];
      if (r === "excluded") {
        lines.push(`[+]${c.name} excluded: ok`);
        excluded.delete(c.name);
      } else if (r === undefined) {
        lines.push(`[+]${c.name} ok`);
      } else {
        failed = true;
        // Upstream withholds the reason on the aggregate page; /<endpoint>/<name> shows it.
        lines.push(`[-]${c.name} failed: reason withheld`);
      }
    });
    if (excluded.size > 0) lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(",")}`);
    if (failed) return { status: 500, body: `${lines.join("\n")}\n${endpoint} check failed\n` };
    return { status: 200, body: verbose ? `${lines.join("\n")}\n${endpoint} check passed\n` : "ok" };
  }

  /** Runs one check and records it; the failure message, or undefined when healthy. */
  async #run(check: HealthCheck, endpoint: HealthEndpoint): Promise<string | undefined> {
    let error: string | undefined;
    try {
      await check.check();
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    this.#gauge?.set({ name: check.name, type: endpoint }, error === undefined ? 1 : 0);
    this.#total?.inc({ name: check.name, status: error === undefined ? "success" : "error", type: endpoint });
    return error;
  }
}

function replace(list: HealthCheck[], check: HealthCheck): void {
  const i = list.findIndex((c) => c.name === check.name);
  if (i >= 0) list[i] = check;
  else list.push(check);
}
