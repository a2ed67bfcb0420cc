// The framework runs one profile's plugins over a pod: PreFilter once (a
// plugin may opt out of filtering this pod), Filter per node until the first
// failure, Score over the feasible nodes (normalized, weighted, summed). It
// times each extension point for scheduler_framework_extension_point_duration_seconds.

import type { ClusterEvent, ClusterView, CycleState, FilterPlugin, Plugin, PreBindPlugin, PreFilterPlugin, ScorePlugin, Status } from "./interface.js";
import { isFilter, isPreBind, isPreFilter, isScore } from "./interface.js";
import type { NodeInfo } from "./node-info.js";
import type { PodInfo } from "./pod-info.js";

export interface ExtensionPointObserver {
  (extensionPoint: string, status: string, seconds: number): void;
}

/** What PreFilter decided for this pod: the filters still to run, or why no node can do. */
export interface PreFilterResult {
  status?: Status;
  filters: readonly FilterPlugin[];
}

export class Framework {
  readonly profile: string;
  readonly plugins: readonly Plugin[];
  readonly #preFilters: readonly PreFilterPlugin[];
  readonly #filters: readonly FilterPlugin[];
  readonly #scores: readonly ScorePlugin[];
  readonly #preBinds: readonly PreBindPlugin[];
  readonly #observe: ExtensionPointObserver;

  constructor(options: { profile?: string; plugins: readonly Plugin[]; observe?: ExtensionPointObserver }) {
    this.profile = options.profile ?? "default-scheduler";
    this.plugins = options.plugins;
    this.#preFilters = options.plugins.filter(isPreFilter);
    this.#filters = options.plugins.filter(isFilter);
    this.#scores = options.plugins.filter(isScore);
    this.#preBinds = options.plugins.filter(isPreBind);
    this.#observe = options.observe ?? (() => {});
  }

  /** Plugins whose rejection the event may undo. */
  pluginsFor(event: ClusterEvent): Set<string> {
    return new Set(this.plugins.filter((p) => p.events.includes(event)).map((p) => p.name));
  }

  runPreFilter(state: CycleState, pod: PodInfo, cluster: ClusterView): PreFilterResult {
    const started = performance.now();
    const skipped = new Set<string>();
    for (const p of this.#preFilters) {
      const result = p.preFilter(state, pod, cluster);
      if (result === "skip") skipped.add(p.name);
      else if (result !== undefined) {
        this.#observe("PreFilter", result.code, (performance.now() - started) / 1000);
        return { status: result, filters: [] };
      }
    }
    this.#observe("PreFilter", "Success", (performance.now() - started) / 1000);
    return { filters: skipped.size === 0 ? this.#filters : this.#filters.filter((f) => !skipped.has(f.name)) };
  }

  /** The first failing filter's status, or undefined when the node fits. */
  runFilters(state: CycleState, pod: PodInfo, node: NodeInfo, filters: readonly FilterPlugin[]): Status | undefined {
    for (let i = 0; i < filters.length; i++) {
      const s = filters[i]!.filter(state, pod, node);
      if (s !== undefined) return s;
    }
    return undefined;
  }

  /** Total weighted score per node, in the order given. */
  runScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
    const started = performance.now();
    const totals = new Array<number>(nodes.length).fill(0);
    const scores = new Array<number>(nodes.length);
    for (const p of this.#scores) {
      for (let i = 0; i < nodes.length; i++) scores[i] = p.score(state, pod, nodes[i]!);
      p.normalize?.(scores);
      for (let i = 0; i < nodes.length; i++) totals[i]! += scores[i]! * p.weight;
    }
    this.#observe("Score", "Success", (performance.now() - started) / 1000);
    return totals;
  }

  /** Runs every PreBind plugin in order; the first that throws fails the binding (the pod is retried). */
  async runPreBind(state: CycleState, pod: PodInfo, nodeName: string): Promise<void> {
    if (this.#preBinds.length === 0) return;
    const started = performance.now();
    try {
      for (const p of this.#preBinds) await p.preBind(state, pod, nodeName);
    } catch (err) {
      this.#observe("PreBind", "Error", (performance.now() - started) / 1000);
      throw err;
    }
    this.#observe("PreBind", "Success", (performance.now() - started) / 1000);
  }

  observe(extensionPoint: string, status: string, seconds: number): void {
    this.#observe(extensionPoint, status, seconds);
  }
}
