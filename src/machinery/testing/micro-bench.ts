// The timing loop of the machinery's micro-benchmarks (*.bench.ts, run from
// dist after a build): warm the JIT up, then print the median of seven timed
// rounds in microseconds per operation, one line per measurement.

export interface MicroBenchOptions {
  /** Calls before timing, at most (default 3000; fewer when `iterations` is smaller). */
  warmup?: number;
  /** Width of the name column (default 40). */
  nameWidth?: number;
}

export function microBench(name: string, iterations: number, fn: () => unknown, options: MicroBenchOptions = {}): void {
  const { warmup = 3000, nameWidth = 40 } = options;
  for (let i = 0; i < Math.min(iterations, warmup); i++) fn();
  const rounds: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    rounds.push(Number(process.hrtime.bigint() - t) / 1000 / iterations);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(nameWidth)} ${rounds[3]!.toFixed(2).padStart(10)} µs/op`);
}
