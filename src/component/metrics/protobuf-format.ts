// The protobuf exposition (io.prometheus.client.MetricFamily, each message
// length-delimited), the only format that carries native histograms (seed 002,
// "Native histograms" 2). Field numbers from prometheus/client_model metrics.proto.

import type { FamilySnapshot, NativeHistogramSnapshot, SeriesSnapshot } from "./types.js";

export const PROTOBUF_CONTENT_TYPE = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

const TYPE = { counter: 0, gauge: 1, summary: 2, untyped: 3, histogram: 4 } as const;

/** A minimal protobuf writer over a growing buffer: varints, doubles, strings and nested messages. */
class Writer {
  #buf: Buffer = Buffer.allocUnsafe(256);
  #len = 0;

  get length(): number {
    return this.#len;
  }

  #ensure(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#len + n));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  varint(v: number): this {
    // Values here are non-negative integers below 2^53.
    this.#ensure(10);
    while (v > 0x7f) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
    return this;
  }

  tag(field: number, wire: 0 | 1 | 2): this {
    return this.varint(field * 8 + wire);
  }

  uint(field: number, v: number): this {
    return this.tag(field, 0).varint(v);
  }

  sint(field: number, v: number): this {
    return this.tag(field, 0).varint(zigzag(v));
  }

  double(field: number, v: number): this {
    this.tag(field, 1);
    this.#ensure(8);
    this.#buf.writeDoubleLE(v, this.#len);
    this.#len += 8;
    return this;
  }

  string(field: number, s: string): this {
    const n = Buffer.byteLength(s);
    this.tag(field, 2).varint(n);
    this.#ensure(n);
    this.#len += this.#buf.write(s, this.#len, "utf8");
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.tag(field, 2).varint(data.length);
    this.#ensure(data.length);
    this.#buf.set(data, this.#len);
    this.#len += data.length;
    return this;
  }

  message(field: number, build: (w: Writer) => void): this {
    const inner = new Writer();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }
}

function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

function writeNative(w: Writer, n: NativeHistogramSnapshot): void {
  w.sint(5, n.schema).double(6, n.zeroThreshold).uint(7, n.zeroCount);
  const side = (spanField: number, deltaField: number, spans: NativeHistogramSnapshot["positiveSpans"], counts: readonly number[]) => {
    for (const [offset, length] of spans) w.message(spanField, (m) => m.sint(1, offset).uint(2, length));
    if (counts.length === 0) return;
    const packed = new Writer();
    let prev = 0;
    for (const c of counts) {
      packed.varint(zigzag(c - prev));
      prev = c;
    }
    w.bytes(deltaField, packed.finish());
  };
  side(9, 10, n.negativeSpans, n.negativeCounts);
  // An empty native histogram still needs a span so scrapers see it as native (as client_golang does).
  const positiveSpans = n.positiveSpans.length === 0 && n.negativeSpans.length === 0 && n.zeroCount === 0 ? [[0, 0] as const] : n.positiveSpans;
  side(12, 13, positiveSpans, n.positiveCounts);
}

function writeMetric(w: Writer, f: FamilySnapshot, s: SeriesSnapshot): void {
  for (let i = 0; i < f.labelNames.length; i++) {
    w.message(1, (l) => l.string(1, f.labelNames[i]!).string(2, s.labelValues[i]!));
  }
  switch (f.kind) {
    case "counter": w.message(3, (m) => m.double(1, s.value ?? 0)); break;
    case "gauge": w.message(2, (m) => m.double(1, s.value ?? 0)); break;
    case "untyped": w.message(5, (m) => m.double(1, s.value ?? 0)); break;
    case "summary":
      w.message(4, (m) => {
        m.uint(1, Math.round(s.count ?? 0)).double(2, s.sum ?? 0);
        for (const [q, v] of s.quantiles ?? []) m.message(3, (qm) => qm.double(1, q).double(2, v));
      });
      break;
    case "histogram":
      w.message(7, (m) => {
        const count = s.count ?? 0;
        if (Number.isInteger(count)) m.uint(1, count);
        else m.double(4, count);
        m.double(2, s.sum ?? 0);
        const bounds = f.buckets ?? [];
        const counts = s.bucketCounts ?? [];
        // The +Inf bucket is implied by sample_count, as client_golang leaves it out.
        for (let i = 0; i < bounds.length; i++) {
          const c = counts[i] ?? 0;
          m.message(3, (b) => (Number.isInteger(c) ? b.uint(1, c) : b.double(4, c)).double(2, bounds[i]!));
        }
        if (s.native !== undefined) writeNative(m, s.native);
      });
      break;
  }
}

export function encodeProtobuf(families: readonly FamilySnapshot[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (const f of families) {
    if (f.series.length === 0) continue;
    const w = new Writer().string(1, f.name).string(2, f.help).uint(3, TYPE[f.kind]);
    for (const s of f.series) w.message(4, (m) => writeMetric(m, f, s));
    const body = w.finish();
    chunks.push(new Writer().varint(body.length).finish(), body);
  }
  return Buffer.concat(chunks);
}
