// setHeapGrowth, measured: the same allocation pattern (a live set of about
// 40 MB renewed batch by batch) in child processes, with V8's adaptive rule
// and with a fixed growth set at run time; the peak heap it reaches follows
// the setting. Children, because the setting is process-wide.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setHeapGrowth } from "./heap-growth.js";

const module = fileURLToPath(new URL("./heap-growth.js", import.meta.url));

/** Peak heapTotal (MiB) of a churning workload under `percent` (undefined: the setting is never called). */
function peakHeap(percent: number | undefined): number {
  const script = `
    const { setHeapGrowth } = await import(${JSON.stringify(module)});
    ${percent === undefined ? "" : `setHeapGrowth(${percent});`}
    const live = []; let peak = 0;
    for (let round = 0; round < 400; round++) {
      const batch = [];
      for (let i = 0; i < 2000; i++) batch.push({ a: "x".repeat(50) + i, b: [i, i + 1], c: { d: String(i) } });
      live.push(batch);
      if (live.length > 100) live.shift();
      peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    process.stdout.write(String(peak / 2 ** 20));`;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
}

test("a fixed heap growth keeps a churning heap closer to its live objects than V8's adaptive rule; 0 is the adaptive rule", () => {
  const adaptive = peakHeap(undefined);
  const zero = peakHeap(0);
  const tight = peakHeap(20);
  assert.ok(tight < 0.8 * adaptive, `growth 20 %: peak ${tight.toFixed(0)} MiB against ${adaptive.toFixed(0)} MiB adaptive`);
  assert.ok(Math.abs(zero - adaptive) < 0.15 * adaptive, `growth 0: peak ${zero.toFixed(0)} MiB, as adaptive ${adaptive.toFixed(0)} MiB`);
});

test("a growth that is not a whole percentage ≥ 0 is refused before it reaches V8", () => {
  assert.throws(() => setHeapGrowth(-1), /whole percentage/);
  assert.throws(() => setHeapGrowth(2.5), /whole percentage/);
});
