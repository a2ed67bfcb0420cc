// Label handling shared by every metric kind: the key a label set is stored
// under, its validation when a series is first seen, and its text rendering
// (computed once per series, so a scrape only concatenates).

import type { Labels } from "./types.js";

const SEP = "\u0000";
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function validateMetricName(name: string): void {
  if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
}

export function validateLabelNames(metric: string, labelNames: readonly string[]): void {
  const seen = new Set<string>();
  for (const l of labelNames) {
    if (!LABEL_NAME.test(l) || l.startsWith("__")) throw new Error(`metric ${metric}: invalid label name ${JSON.stringify(l)}`);
    if (seen.has(l)) throw new Error(`metric ${metric}: duplicate label name ${l}`);
    seen.add(l);
  }
}

/** Key of a label set: the values in labelNames order. Missing labels read as "". */
export function seriesKey(labelNames: readonly string[], labels: Labels | undefined): string {
  const n = labelNames.length;
  if (n === 0 || labels === undefined) return "";
  if (n === 1) return labels[labelNames[0]!] ?? "";
  let key = labels[labelNames[0]!] ?? "";
  for (let i = 1; i < n; i++) key += SEP + (labels[labelNames[i]!] ?? "");
  return key;
}

/** Checks a label set the first time its series is created (cheap paths skip this). */
export function labelValuesOf(metric: string, labelNames: readonly string[], labels: Labels | undefined): string[] {
  const given = labels === undefined ? [] : Object.keys(labels);
  for (const k of given) {
    if (!labelNames.includes(k)) throw new Error(`metric ${metric}: unknown label ${JSON.stringify(k)} (labels: ${labelNames.join(", ") || "none"})`);
  }
  return labelNames.map((l) => {
    const v = labels?.[l];
    if (v === undefined) throw new Error(`metric ${metric}: missing label ${JSON.stringify(l)}`);
    if (typeof v !== "string") throw new Error(`metric ${metric}: label ${l} must be a string`);
    return v;
  });
}

export function escapeLabelValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : v;
}

/** `{a="1",b="2"}`, or "" without labels. */
export function renderLabels(labelNames: readonly string[], values: readonly string[]): string {
  if (labelNames.length === 0) return "";
  let out = "{";
  for (let i = 0; i < labelNames.length; i++) {
    if (i > 0) out += ",";
    out += `${labelNames[i]}="${escapeLabelValue(values[i]!)}"`;
  }
  return out + "}";
}

/** A family's series by key, each created (and validated) on first use. */
export class SeriesMap<S> {
  readonly #metric: string;
  readonly #labelNames: readonly string[];
  readonly #create: (labelValues: string[], labelText: string) => S;
  readonly #byKey = new Map<string, S>();

  constructor(options: { metric: string; labelNames: readonly string[]; create: (labelValues: string[], labelText: string) => S }) {
    this.#metric = options.metric;
    this.#labelNames = options.labelNames;
    this.#create = options.create;
  }

  get(labels: Labels | undefined): S {
    const key = seriesKey(this.#labelNames, labels);
    let s = this.#byKey.get(key);
    if (s === undefined) {
      const values = labelValuesOf(this.#metric, this.#labelNames, labels);
      s = this.#create(values, renderLabels(this.#labelNames, values));
      this.#byKey.set(key, s);
    }
    return s;
  }

  delete(labels: Labels | undefined): boolean {
    return this.#byKey.delete(seriesKey(this.#labelNames, labels));
  }

  clear(): void {
    this.#byKey.clear();
  }

  values(): IterableIterator<S> {
    return this.#byKey.values();
  }

  get size(): number {
    return this.#byKey.size;
  }
}
