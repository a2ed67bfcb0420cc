// The z-pages /statusz and /flagz (seed 002, "Structured diagnostic
// responses"): plain text for people (a title line, a warning that the text is
// not for machines, then the facts), or structured JSON config.orch.io/v1beta1
// when asked with `application/json;v=v1beta1;g=config.orch.io;as=Statusz|Flagz`.
// `application/json` without g, v and as (or with others) is 406.

import { admits, mediaType, parseAccept } from "./accept.js";
import type { FlagEntry } from "./flags.js";
import { EMULATION_VERSION, MINIMUM_COMPATIBILITY_VERSION, versionInfo } from "./version.js";

export type ZPageKind = "Statusz" | "Flagz";

export const ZPAGE_API_VERSION = "config.orch.io/v1beta1";
/** Media-type group parameters accepted: ours and upstream's spelling (as for meta.orch.io). */
const GROUPS = new Set(["config.orch.io", "config.k8s.io"]);
const WARNING =
  "Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.";
/** What a confidential flag's value reads as. */
export const REDACTED = "CLASSIFIED";

export interface ZPageAnswer {
  readonly status: 200 | 406;
  readonly contentType: string;
  readonly body: string;
}

export interface StatuszInfo {
  readonly component: string;
  readonly startTime: Date;
  readonly paths: readonly string[];
}

/** Picks text or structured output; undefined when nothing acceptable was asked for (406). */
export function negotiateZPage(accept: string | undefined, kind: ZPageKind): "text" | "json" | undefined {
  for (const r of parseAccept(accept)) {
    if (mediaType(r) === "application/json") {
      const { g, v, as } = r.params;
      if (g !== undefined && GROUPS.has(g) && v === "v1beta1" && as === kind) return "json";
      continue;
    }
    if (admits(r, "text/plain")) return "text";
  }
  return undefined;
}

function notAcceptable(kind: ZPageKind): ZPageAnswer {
  return {
    status: 406,
    contentType: "text/plain; charset=utf-8",
    body: `406 Not Acceptable: ask for text/plain or application/json;v=v1beta1;g=config.orch.io;as=${kind}\n`,
  };
}

function text(title: string, lines: readonly string[]): ZPageAnswer {
  return { status: 200, contentType: "text/plain; charset=utf-8", body: `${title}\n${WARNING}\n\n${lines.join("\n")}\n` };
}

function json(kind: ZPageKind, body: Record<string, unknown>): ZPageAnswer {
  return {
    status: 200,
    contentType: `application/json;v=v1beta1;g=config.orch.io;as=${kind}`,
    body: JSON.stringify({ kind, apiVersion: ZPAGE_API_VERSION, ...body }),
  };
}

function uptime(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h} hr ${String(m).padStart(2, "0")} min ${String(s).padStart(2, "0")} sec`;
}

export function statusz(info: StatuszInfo, accept: string | undefined, now = new Date()): ZPageAnswer {
  const as = negotiateZPage(accept, "Statusz");
  if (as === undefined) return notAcceptable("Statusz");
  const v = versionInfo();
  const binaryVersion = v.gitVersion.replace(/^v/, "");
  const uptimeSeconds = Math.max(0, Math.floor((now.getTime() - info.startTime.getTime()) / 1000));
  const paths = [...info.paths].sort();
  if (as === "json") {
    return json("Statusz", {
      metadata: { name: info.component },
      startTime: info.startTime.toISOString().replace(/\.\d{3}Z$/, "Z"),
      uptimeSeconds,
      goVersion: v.goVersion,
      binaryVersion,
      emulationVersion: EMULATION_VERSION,
      minimumCompatibilityVersion: MINIMUM_COMPATIBILITY_VERSION,
      paths,
    });
  }
  return text(`${info.component} statusz`, [
    `Started: ${info.startTime.toUTCString()}`,
    `Up: ${uptime(uptimeSeconds)}`,
    `Go version: ${v.goVersion}`,
    `Binary version: ${binaryVersion}`,
    `Emulation version: ${EMULATION_VERSION}`,
    `Minimum Compatibility version: ${MINIMUM_COMPATIBILITY_VERSION}`,
    `Paths: ${paths.join(" ")}`,
  ]);
}

export function flagz(component: string, flags: readonly FlagEntry[], accept: string | undefined): ZPageAnswer {
  const as = negotiateZPage(accept, "Flagz");
  if (as === undefined) return notAcceptable("Flagz");
  const values: Record<string, string> = {};
  for (const f of flags) values[f.name] = f.sensitive ? REDACTED : f.text;
  if (as === "json") return json("Flagz", { metadata: { name: component }, flags: values });
  return text(`${component} flagz`, Object.entries(values).map(([k, v]) => `${k}=${v}`));
}
