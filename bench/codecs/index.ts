// bench/codecs: the four response formats side by side (seed 000, "Media
// types and negotiation"): encode and decode a ~3 KB pod and a 5,000-pod list
// with the server's own encoders (encodeValue) and decoders, as MB/s,
// objects/s and sizes. JSON (V8's JSON.stringify/parse) is the baseline; the
// issue's target: the Protobuf list is smaller than JSON and at least as fast
// to encode.
// Usage: node dist/bench/codecs/index.js [--json] [--runs=N] [--only=json,protobuf] [--pods=5000]

import { builtinModules } from "../../src/api/index.js";
import { namingFor } from "../../src/machinery/naming.js";
import { ApiRegistry } from "../../src/apiserver/api-registry.js";
import { encodeValue } from "../../src/apiserver/http/respond.js";
import type { Format } from "../../src/machinery/negotiation.js";
import { decodeCbor } from "../../src/machinery/codec/cbor/index.js";
import { decodeEnvelope } from "../../src/machinery/codec/protobuf/index.js";
import { benchPod } from "../../src/machinery/codec/protobuf/testing.js";
import { parseYamlBody } from "../../src/machinery/decode/index.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const FORMATS: Format[] = ["json", "yaml", "cbor", "protobuf"];
const POD = "io.k8s.api.core.v1.Pod";

/** Report rows are keyed by name, so the unit is part of it. */
function metrics(listLabel: string): Metric[] {
  const rows: Metric[] = [];
  for (const label of ["pod", listLabel]) {
    rows.push({ name: `${label}: size [bytes]`, unit: "bytes", better: "lower" });
    for (const op of ["encode", "decode"]) {
      rows.push({ name: `${label}: ${op} [MB/s]`, unit: "MB/s", better: "higher" });
      rows.push({ name: `${label}: ${op} [objects/s]`, unit: "objects/s", better: "higher" });
    }
  }
  return rows;
}

/** Operations per second of `fn`, timed over at least `minMs` (and at least twice) after as long a warm-up. */
function rate(fn: () => unknown, minMs: number): number {
  // Warm up the JIT, the codec's compiled encoders and the garbage collector's heap sizing.
  for (const start = Date.now(); Date.now() - start < minMs; ) fn();
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (n < 2 || elapsed < minMs) {
    fn();
    n++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (n * 1000) / elapsed;
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const podsArg = process.argv.find((a) => a.startsWith("--pods="));
  const podCount = podsArg === undefined ? 5000 : Number(podsArg.slice("--pods=".length));
  const registry = new ApiRegistry(builtinModules(), namingFor());
  const schemas = registry.schemas;
  const lookup = (apiVersion: string, kind: string) => registry.schemaTypeOf(apiVersion, kind);
  const decoders: Record<Format, (bytes: Buffer) => unknown> = {
    json: (b) => JSON.parse(b.toString("utf8")),
    yaml: (b) => parseYamlBody(b, { maxBytes: Infinity }).value,
    cbor: (b) => decodeCbor(b),
    protobuf: (b) => decodeEnvelope(b, schemas, lookup),
  };
  const pod = benchPod();
  const list = { apiVersion: "v1", kind: "PodList", metadata: { resourceVersion: "99999" }, items: Array.from({ length: podCount }, (_, i) => benchPod(i)) };
  const listLabel = `${podCount.toLocaleString("en-US")}-pod list`;
  const formats = args.only.length > 0 ? FORMATS.filter((f) => args.only.includes(f)) : FORMATS;
  const report: Report = {
    title: `Codecs: encode and decode per format (a ~3 KB pod; a ${podCount.toLocaleString("en-US")}-pod list)`,
    comparedWith: "JSON (V8's JSON.stringify / JSON.parse); target: Protobuf list smaller than JSON and at least as fast to encode",
    runs: args.runs,
    metrics: metrics(listLabel),
    samples: {},
  };
  // Runs outermost: every format is measured in each run, close in time, so a noisy machine hurts them alike.
  for (let run = 0; run < args.runs; run++) {
    for (const format of formats) {
      const samples = (report.samples[format] ??= {});
      const add = (name: string, unit: string, v: number) => (samples[`${name} [${unit}]`] ??= []).push(v);
      for (const [label, value, typeName, objects, ms] of [
        ["pod", pod, POD, 1, 300],
        [listLabel, list, `${POD}List`, podCount, 1500],
      ] as const) {
        const bytes = Buffer.from(encodeValue(value, format, typeName, schemas));
        const mb = bytes.length / 1e6;
        const enc = rate(() => encodeValue(value, format, typeName, schemas), ms);
        const dec = rate(() => decoders[format](bytes), ms);
        add(`${label}: size`, "bytes", bytes.length);
        add(`${label}: encode`, "MB/s", enc * mb);
        add(`${label}: encode`, "objects/s", enc * objects);
        add(`${label}: decode`, "MB/s", dec * mb);
        add(`${label}: decode`, "objects/s", dec * objects);
      }
    }
  }
  printReport(report, args.json);
}

main();
