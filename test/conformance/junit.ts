// Reads the JUnit XML that upstream's e2e.test writes with --report-dir
// (ginkgo v1's reporter: one <testsuite> of <testcase name=... time=...>,
// each with <failure>, <skipped/> or nothing when it passed). Only the few
// elements that reporter writes are understood; attribute values are
// XML-unescaped.

export type SpecResult = "passed" | "failed" | "skipped";

export interface SpecOutcome {
  name: string;
  result: SpecResult;
  seconds: number;
  /** The failure's message (first lines), for failed specs. */
  message?: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ENTITIES[e]!;
  });
}

function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m === null ? undefined : unescapeXml(m[1]!);
}

/** Every <testcase> in a ginkgo JUnit report. */
export function parseJUnit(xml: string): SpecOutcome[] {
  const out: SpecOutcome[] = [];
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(re)) {
    const tag = m[1]!;
    const body = m[3] ?? "";
    const name = attribute(tag, "name") ?? "";
    const seconds = Number(attribute(tag, "time") ?? 0);
    const failure = /<(failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    if (failure !== null) {
      const text = unescapeXml(failure[3] ?? attribute(failure[2]!, "message") ?? "").trim();
      out.push({ name, result: "failed", seconds, message: text });
    } else if (/<skipped\b/.test(body)) {
      out.push({ name, result: "skipped", seconds });
    } else {
      out.push({ name, result: "passed", seconds });
    }
  }
  return out;
}

/**
 * One outcome per spec from several shards' reports: each shard's report lists every spec of the suite,
 * skipped but for its own, so a spec's run outcome wins over the skips other shards report for it.
 */
export function mergeShards(outcomes: readonly SpecOutcome[]): SpecOutcome[] {
  const byName = new Map<string, SpecOutcome>();
  for (const o of outcomes) {
    const seen = byName.get(o.name);
    if (seen === undefined || (seen.result === "skipped" && o.result !== "skipped")) byName.set(o.name, o);
  }
  return [...byName.values()];
}

/** A regular expression (Go RE2 syntax) matching exactly these spec names, for --ginkgo.focus. */
export function focusFor(names: readonly string[]): string {
  return names.map((n) => n.replace(/[\\^$.|?*+()[\]{}]/g, (c) => `\\${c}`)).join("|");
}
