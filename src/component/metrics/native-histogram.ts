// Native (sparse, exponential-bucket) histogram state, seed 002 "Native
// histograms": bucket i of schema s holds (2^((i-1)/2^s), 2^(i/2^s)]. Starts at
// schema 3 (growth factor ~1.09, upstream's 1.1) and halves the resolution
// whenever more than `maxBuckets` (160) buckets are populated.

import type { NativeHistogramSnapshot } from "./types.js";

export const NATIVE_MAX_BUCKETS = 160;
const START_SCHEMA = 3;
const MIN_SCHEMA = -4;
/** Upstream's default zero bucket width: 2^-128. */
export const NATIVE_ZERO_THRESHOLD = 2 ** -128;

export class NativeBuckets {
  #schema = START_SCHEMA;
  #zeroCount = 0;
  #positive = new Map<number, number>();
  #negative = new Map<number, number>();
  readonly #maxBuckets: number;

  constructor(maxBuckets = NATIVE_MAX_BUCKETS) {
    this.#maxBuckets = maxBuckets;
  }

  get schema(): number {
    return this.#schema;
  }

  get bucketCount(): number {
    return this.#positive.size + this.#negative.size;
  }

  observe(value: number): void {
    if (Number.isNaN(value)) return;
    const abs = Math.abs(value);
    if (abs <= NATIVE_ZERO_THRESHOLD) {
      this.#zeroCount++;
      return;
    }
    const buckets = value > 0 ? this.#positive : this.#negative;
    const index = bucketIndex(abs, this.#schema);
    buckets.set(index, (buckets.get(index) ?? 0) + 1);
    while (this.bucketCount > this.#maxBuckets && this.#schema > MIN_SCHEMA) this.#halveResolution();
  }

  // Going from schema s to s-1 merges buckets 2j-1 and 2j into j.
  #halveResolution(): void {
    this.#schema--;
    for (const which of [this.#positive, this.#negative]) {
      const merged = new Map<number, number>();
      for (const [i, n] of which) {
        const j = Math.ceil(i / 2);
        merged.set(j, (merged.get(j) ?? 0) + n);
      }
      which.clear();
      for (const [j, n] of merged) which.set(j, n);
    }
  }

  snapshot(): NativeHistogramSnapshot {
    const pos = spans(this.#positive);
    const neg = spans(this.#negative);
    return {
      schema: this.#schema,
      zeroThreshold: NATIVE_ZERO_THRESHOLD,
      zeroCount: this.#zeroCount,
      positiveSpans: pos.spans,
      positiveCounts: pos.counts,
      negativeSpans: neg.spans,
      negativeCounts: neg.counts,
    };
  }
}

export function bucketIndex(abs: number, schema: number): number {
  return Math.ceil(Math.log2(abs) * 2 ** schema);
}

/** Populated buckets as spans (offset from the previous span's end; first: absolute) and counts. */
function spans(buckets: ReadonlyMap<number, number>): { spans: [number, number][]; counts: number[] } {
  const keys = [...buckets.keys()].sort((a, b) => a - b);
  const out: [number, number][] = [];
  const counts: number[] = [];
  let prevEnd = 0;
  for (let k = 0; k < keys.length; k++) {
    const i = keys[k]!;
    const last = out[out.length - 1];
    if (last !== undefined && i === prevEnd) {
      last[1]++;
    } else {
      out.push([last === undefined ? i : i - prevEnd, 1]);
    }
    prevEnd = i + 1;
    counts.push(buckets.get(i)!);
  }
  return { spans: out, counts };
}
