// The run loop the API benchmarks share: for each backend, `runs` fresh
// `orch apiserver` processes, each measured once; the samples per backend
// and metric name, as a Report holds them.

import { startOrchOn, type Backend } from "../../test/support/orch-backend.js";
import type { OrchProcess } from "../../test/support/orch-process.js";

export async function sampleOnBackends(
  backends: readonly Backend[],
  options: { runs: number; json: boolean },
  measure: (orch: OrchProcess) => Promise<Record<string, number>>,
): Promise<Record<string, Record<string, number[]>>> {
  const out: Record<string, Record<string, number[]>> = {};
  for (const backend of backends) {
    const samples: Record<string, number[]> = {};
    for (let run = 0; run < options.runs; run++) {
      const orch = await startOrchOn(backend);
      try {
        for (const [k, v] of Object.entries(await measure(orch))) (samples[k] ??= []).push(v);
      } finally {
        await orch.stop();
      }
      if (!options.json) process.stderr.write(`${backend}: run ${run + 1}/${options.runs} done\n`);
    }
    out[backend] = samples;
  }
  return out;
}
