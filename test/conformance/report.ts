// docs/conformance.md from a run's outcomes: when, on which commit, totals,
// the specs left out on purpose with their reasons, and one row per spec.

import { existsSync, readFileSync } from "node:fs";
import type { SpecOutcome } from "./junit.js";

export interface Skip {
  name: string;
  reason: string;
}

export interface RunFacts {
  date: Date;
  minutes: number;
  commit: string;
  e2eVersion: string;
  runtime: string;
  focus: string;
  /** How many specs match the conformance focus in all. */
  total: number;
}

/** The skip file: one spec per line, `SPEC NAME<TAB>REASON`; `#` starts a comment line. */
export function readSkips(file: string): Skip[] {
  if (!existsSync(file)) return [];
  const skips: Skip[] = [];
  for (const [i, line] of readFileSync(file, "utf8").split("\n").entries()) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const [name, reason] = line.split("\t");
    if (reason === undefined || reason.trim() === "") throw new Error(`${file}:${i + 1}: a skipped spec needs a reason after a tab`);
    skips.push({ name: name!.trim(), reason: reason.trim() });
  }
  return skips;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();
}

/** What went wrong, on one line: the failure without ginkgo's source locations, cut at 200 characters. */
function gist(message: string | undefined): string {
  const text = (message ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !/^\/.*\.go:\d+$/.test(l)).join(" ");
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

export function writeReport(facts: RunFacts, outcomes: SpecOutcome[], skips: Skip[], selected: string[]): string {
  const byName = new Map(outcomes.map((o) => [o.name, o]));
  const passed = outcomes.filter((o) => o.result === "passed").length;
  const failed = outcomes.filter((o) => o.result === "failed").length;
  const notRun = selected.filter((n) => !byName.has(n) || byName.get(n)!.result === "skipped");
  const lines = [
    "# Upstream's conformance suite on orch",
    "",
    "Written by `scripts/conformance.sh` (test/conformance/run.ts); do not edit by hand. How to run it: README,",
    "\"Conformance\". What each failure needs is in the issue tracker (issue 17 and the issues it names).",
    "",
    `- Run: ${facts.date.toISOString().slice(0, 16).replace("T", " ")} UTC, ${facts.minutes.toFixed(0)} minutes, orch commit \`${facts.commit}\`, ` +
      `\`orch server --api-group-suffix=k8s.io\` on the ${facts.runtime} runtime`,
    `- Suite: ${facts.e2eVersion || "e2e.test"}, focus \`${facts.focus.length > 60 ? "a focus file" : facts.focus}\``,
    "",
    "| specs | count |",
    "|---|---|",
    `| conformance specs in the suite | ${facts.total} |`,
    `| run | ${selected.length} |`,
    `| **passed** | **${passed}** |`,
    `| failed | ${failed} |`,
    `| selected but not run (a shard stopped early) | ${notRun.length} |`,
    `| left out on purpose (below) | ${skips.length} |`,
    "",
  ];
  if (skips.length > 0) {
    lines.push("## Left out on purpose", "", "| spec | reason |", "|---|---|");
    for (const s of skips) lines.push(`| ${cell(s.name)} | ${cell(s.reason)} |`);
    lines.push("");
  }
  lines.push("## Every spec run", "", "| spec | result | seconds | what failed |", "|---|---|---|---|");
  for (const name of selected) {
    const o = byName.get(name);
    const result = o === undefined || o.result === "skipped" ? "not run" : o.result;
    lines.push(`| ${cell(name)} | ${result} | ${o ? o.seconds.toFixed(0) : ""} | ${cell(gist(o?.message))} |`);
  }
  return `${lines.join("\n")}\n`;
}
