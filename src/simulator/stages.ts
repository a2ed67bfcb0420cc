// The stages of a simulated pod, as kwok's Stage objects reduce to for a
// node nobody runs: how long after an event the simulator moves the pod on.
// A small JSON or YAML file of Go durations (`--stages FILE`):
//
//   podRunning:   { delay: 1s, jitter: 500ms }  # bound → Running, containers ready
//   podSucceeded: { delay: 10m }                # Running → Succeeded (absent: never, unless annotated)
//   podDelete:    { delay: 0s }                 # marked for deletion → deleted with grace 0
//
// A stage waits `delay` plus a uniform share of `jitter`. A pod annotated
// `simulate-nodes.orch.io/succeed-after: <duration>` succeeds that long after
// it started Running, whatever podSucceeded says.

import { parse } from "yaml";
import { parseDuration } from "../machinery/duration.js";

export interface Stage {
  readonly delayMs: number;
  readonly jitterMs: number;
}

export interface Stages {
  readonly podRunning: Stage;
  /** undefined: pods run until deleted (unless annotated). */
  readonly podSucceeded: Stage | undefined;
  readonly podDelete: Stage;
}

export const SUCCEED_AFTER_ANNOTATION = "simulate-nodes.orch.io/succeed-after";

const IMMEDIATE: Stage = Object.freeze({ delayMs: 0, jitterMs: 0 });
export const DEFAULT_STAGES: Stages = Object.freeze({ podRunning: IMMEDIATE, podSucceeded: undefined, podDelete: IMMEDIATE });

const STAGE_NAMES = ["podRunning", "podSucceeded", "podDelete"] as const;

/** Parses a stages file (JSON or YAML); throws an Error naming the field at fault. */
export function parseStages(text: string, source = "stages"): Stages {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`${source}: not JSON or YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return DEFAULT_STAGES;
  if (typeof doc !== "object" || Array.isArray(doc)) throw new Error(`${source}: must be a mapping of stage names to { delay, jitter }`);
  const out: { -readonly [K in keyof Stages]: Stages[K] } = { ...DEFAULT_STAGES };
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    if (!(STAGE_NAMES as readonly string[]).includes(name)) throw new Error(`${source}: unknown stage "${name}" (known: ${STAGE_NAMES.join(", ")})`);
    out[name as (typeof STAGE_NAMES)[number]] = parseStage(value, `${source}: ${name}`);
  }
  return Object.freeze(out);
}

function parseStage(value: unknown, where: string): Stage {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${where}: must be a mapping with delay and jitter`);
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (key !== "delay" && key !== "jitter") throw new Error(`${where}: unknown field "${key}" (known: delay, jitter)`);
  return Object.freeze({ delayMs: durationField(fields["delay"], `${where}.delay`), jitterMs: durationField(fields["jitter"], `${where}.jitter`) });
}

function durationField(value: unknown, where: string): number {
  if (value === undefined) return 0;
  if (typeof value !== "string") throw new Error(`${where}: must be a duration string such as "1s" or "250ms"`);
  const ms = parseDurationOrThrow(value, where);
  if (ms < 0) throw new Error(`${where}: must not be negative (got "${value}")`);
  return ms;
}

function parseDurationOrThrow(value: string, where: string): number {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
}

/** The wait of one stage: delay plus a uniform share of jitter. */
export function stageWaitMs(stage: Stage, random: () => number = Math.random): number {
  return stage.delayMs + (stage.jitterMs > 0 ? random() * stage.jitterMs : 0);
}

/** The pod's own completion time from its annotation, if it has a valid one. */
export function succeedAfterMs(annotations: Readonly<Record<string, string>> | null | undefined): number | undefined {
  const raw = annotations?.[SUCCEED_AFTER_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    const ms = parseDuration(raw);
    return ms >= 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}
