// Test helpers for metrics: parse a text exposition into families, check that a
// component exposes a metric with exactly the seed's kind and label names, and
// decode the protobuf exposition (a small reader, so tests need no schema files).

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";

export interface ParsedFamily {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  /** Label names of the samples (without le/quantile), sorted; one entry per distinct set. */
  readonly labelSets: readonly (readonly string[])[];
  readonly samples: readonly { readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number }[];
}

function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  return out;
}

const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

/** Parses text format 0.0.4 (or OpenMetrics) into families keyed by name. */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, { name: string; type: string; help: string; labelSets: Map<string, string[]>; samples: ParsedFamily["samples"][number][] }>();
  const family = (name: string) => {
    let f = families.get(name);
    if (f === undefined) families.set(name, (f = { name, type: "untyped", help: "", labelSets: new Map(), samples: [] }));
    return f;
  };
  for (const line of text.split("\n")) {
    if (line === "" || line === "# EOF") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta !== null) {
      const f = family(meta[2]!);
      if (meta[1] === "TYPE") f.type = meta[3]!;
      else f.help = meta[3]!;
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)/.exec(line);
    assert.ok(m !== null, `unparsable sample line: ${line}`);
    const sampleName = m[1]!;
    let owner = families.get(sampleName);
    if (owner === undefined) {
      const suffix = SUFFIXES.find((s) => sampleName.endsWith(s) && families.has(sampleName.slice(0, -s.length)));
      owner = family(suffix === undefined ? sampleName : sampleName.slice(0, -suffix.length));
    }
    const labels = parseLabels(m[2] ?? "");
    const value = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    owner.samples.push({ name: sampleName, labels, value });
    const names = Object.keys(labels).filter((l) => l !== "le" && l !== "quantile").sort();
    owner.labelSets.set(names.join(","), names);
  }
  const out = new Map<string, ParsedFamily>();
  for (const [k, f] of families) out.set(k, { name: f.name, type: f.type, help: f.help, labelSets: [...f.labelSets.values()], samples: f.samples });
  return out;
}

export interface ExpectedMetric {
  readonly name: string;
  /** counter, gauge, histogram, summary; "custom" accepts whatever the collector declares. */
  readonly kind: string;
  readonly labels: readonly string[];
}

/**
 * Asserts that `text` exposes `expected.name` with that kind and, on every
 * sample, exactly that label set (seed 002: stable metrics' labels may be
 * neither added nor removed). The metric must have at least one sample.
 */
export function assertExposesMetric(text: string | Map<string, ParsedFamily>, expected: ExpectedMetric): void {
  const families = typeof text === "string" ? parseExposition(text) : text;
  const f = families.get(expected.name);
  assert.ok(f !== undefined && f.samples.length > 0, `metric ${expected.name} is not exposed`);
  if (expected.kind !== "custom") assert.equal(f.type, expected.kind, `metric ${expected.name}: kind`);
  const want = [...expected.labels].sort();
  for (const set of f.labelSets) assert.deepEqual(set, want, `metric ${expected.name}: label names`);
}

// --- protobuf ---

export interface DecodedMetric {
  label: { name: string; value: string }[];
  counter?: { value: number };
  gauge?: { value: number };
  untyped?: { value: number };
  summary?: { sampleCount: number; sampleSum: number; quantile: { quantile: number; value: number }[] };
  histogram?: {
    sampleCount: number; sampleSum: number;
    bucket: { cumulativeCount: number; upperBound: number }[];
    schema: number; zeroThreshold: number; zeroCount: number;
    /** Decoded from spans and deltas: [bucket index, count]. */
    positiveBuckets: [number, number][];
    negativeBuckets: [number, number][];
  };
}

export interface DecodedFamily { name: string; help: string; type: number; metric: DecodedMetric[] }

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly end = buf.length) {}
  varint(): number {
    let result = 0;
    let mul = 1;
    for (;;) {
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  }
  sint(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }
  double(): number {
    const v = Buffer.from(this.buf.buffer, this.buf.byteOffset + this.pos, 8).readDoubleLE();
    this.pos += 8;
    return v;
  }
  sub(): Reader {
    const len = this.varint();
    const r = new Reader(this.buf.subarray(this.pos, this.pos + len));
    this.pos += len;
    return r;
  }
  string(): string {
    const len = this.varint();
    const s = Buffer.from(this.buf.subarray(this.pos, this.pos + len)).toString("utf8");
    this.pos += len;
    return s;
  }
  fields(on: (field: number, wire: number) => void): void {
    while (this.pos < this.end) {
      const tag = this.varint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      const before = this.pos;
      on(field, wire);
      if (this.pos === before) this.skip(wire);
    }
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.pos += this.varint();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

function valueOf(r: Reader): { value: number } {
  let value = 0;
  r.fields((f) => { if (f === 1) value = r.double(); });
  return { value };
}

function expand(spans: [number, number][], deltas: number[]): [number, number][] {
  const out: [number, number][] = [];
  let index = 0;
  let count = 0;
  let d = 0;
  spans.forEach(([offset, length], i) => {
    index = i === 0 ? offset : index + offset;
    for (let k = 0; k < length; k++, index++) out.push([index, (count += deltas[d++]!)]);
  });
  return out;
}

function decodeHistogram(r: Reader): NonNullable<DecodedMetric["histogram"]> {
  let sampleCount = 0, sampleSum = 0, schema = 0, zeroThreshold = 0, zeroCount = 0;
  const bucket: { cumulativeCount: number; upperBound: number }[] = [];
  const spans: Record<"pos" | "neg", [number, number][]> = { pos: [], neg: [] };
  const deltas: Record<"pos" | "neg", number[]> = { pos: [], neg: [] };
  const readDeltas = (into: number[], wire: number) => {
    if (wire === 2) { const s = r.sub(); while (s.pos < s.end) into.push(s.sint()); } else into.push(r.sint());
  };
  r.fields((f, wire) => {
    switch (f) {
      case 1: sampleCount = r.varint(); break;
      case 4: sampleCount = r.double(); break;
      case 2: sampleSum = r.double(); break;
      case 3: {
        const b = r.sub();
        const out = { cumulativeCount: 0, upperBound: 0 };
        b.fields((bf) => {
          if (bf === 1) out.cumulativeCount = b.varint();
          else if (bf === 4) out.cumulativeCount = b.double();
          else if (bf === 2) out.upperBound = b.double();
        });
        bucket.push(out);
        break;
      }
      case 5: schema = r.sint(); break;
      case 6: zeroThreshold = r.double(); break;
      case 7: zeroCount = r.varint(); break;
      case 9: case 12: {
        const s = r.sub();
        const span: [number, number] = [0, 0];
        s.fields((sf) => { if (sf === 1) span[0] = s.sint(); else if (sf === 2) span[1] = s.varint(); });
        spans[f === 9 ? "neg" : "pos"].push(span);
        break;
      }
      case 10: readDeltas(deltas.neg, wire); break;
      case 13: readDeltas(deltas.pos, wire); break;
    }
  });
  return {
    sampleCount, sampleSum, bucket, schema, zeroThreshold, zeroCount,
    positiveBuckets: expand(spans.pos, deltas.pos), negativeBuckets: expand(spans.neg, deltas.neg),
  };
}

/** Decodes a delimited io.prometheus.client.MetricFamily stream. */
export function decodeMetricFamilies(data: Uint8Array): DecodedFamily[] {
  const out: DecodedFamily[] = [];
  const r = new Reader(data);
  while (r.pos < r.end) {
    const m = r.sub();
    const fam: DecodedFamily = { name: "", help: "", type: 0, metric: [] };
    m.fields((f) => {
      if (f === 1) fam.name = m.string();
      else if (f === 2) fam.help = m.string();
      else if (f === 3) fam.type = m.varint();
      else if (f === 4) {
        const mr = m.sub();
        const metric: DecodedMetric = { label: [] };
        mr.fields((mf) => {
          switch (mf) {
            case 1: {
              const l = mr.sub();
              const pair = { name: "", value: "" };
              l.fields((lf) => { if (lf === 1) pair.name = l.string(); else if (lf === 2) pair.value = l.string(); });
              metric.label.push(pair);
              break;
            }
            case 2: metric.gauge = valueOf(mr.sub()); break;
            case 3: metric.counter = valueOf(mr.sub()); break;
            case 5: metric.untyped = valueOf(mr.sub()); break;
            case 4: {
              const s = mr.sub();
              const summary = { sampleCount: 0, sampleSum: 0, quantile: [] as { quantile: number; value: number }[] };
              s.fields((sf) => {
                if (sf === 1) summary.sampleCount = s.varint();
                else if (sf === 2) summary.sampleSum = s.double();
                else if (sf === 3) {
                  const q = s.sub();
                  const pair = { quantile: 0, value: 0 };
                  q.fields((qf) => { if (qf === 1) pair.quantile = q.double(); else if (qf === 2) pair.value = q.double(); });
                  summary.quantile.push(pair);
                }
              });
              metric.summary = summary;
              break;
            }
            case 7: metric.histogram = decodeHistogram(mr.sub()); break;
          }
        });
        fam.metric.push(metric);
      }
    });
    out.push(fam);
  }
  return out;
}

// --- declarations ---

/**
 * Asserts a metric is registered with exactly these label names, for metrics
 * that have no samples yet (a family without series is not exposed, as upstream).
 */
export function assertDeclaresMetric(registry: { get(name: string): { labelNames: readonly string[]; kind: string } | undefined }, expected: ExpectedMetric): void {
  const metric = registry.get(expected.name);
  assert.ok(metric !== undefined, `metric ${expected.name} is not registered`);
  if (expected.kind !== "custom") assert.equal(metric.kind, expected.kind, `metric ${expected.name}: kind`);
  assert.deepEqual([...metric.labelNames].sort(), [...expected.labels].sort(), `metric ${expected.name}: label names`);
}

// --- promtool ---

/** Why tests needing `command` cannot run here (undefined when they can); under CI=true its absence is an error. */
export function commandSkipReason(command: string, debianPackage: string): string | undefined {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    const reason = `${command} not found (Debian package ${debianPackage})`;
    if (process.env["CI"] === "true") throw new Error(`${reason}; CI=true, so this test fails instead of skipping`);
    return reason;
  }
}

export function promtoolSkipReason(): string | undefined {
  return commandSkipReason("promtool", "prometheus");
}

/** Runs `promtool check metrics` on an exposition; resolves to its exit code and output (lint problems are printed, exit 3 for lint). */
export function promtoolCheckMetrics(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, output }));
    child.stdin.end(text);
  });
}

/** How many observations of histogram `name` in series matching `labels` were above bucket bound `le` ("0.6"). */
export function observationsAbove(families: Map<string, ParsedFamily>, name: string, labels: Record<string, string>, le: string): number {
  const samples = families.get(name)?.samples ?? [];
  const matching = (s: ParsedFamily["samples"][number]) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  const sum = (pick: (s: ParsedFamily["samples"][number]) => boolean) => samples.filter((s) => matching(s) && pick(s)).reduce((n, s) => n + s.value, 0);
  return sum((s) => s.name === `${name}_count`) - sum((s) => s.name === `${name}_bucket` && s.labels["le"] === le);
}
