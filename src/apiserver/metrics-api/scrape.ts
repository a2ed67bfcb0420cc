// What the API server keeps of the node agents' /metrics/resource, as
// metrics-server does: every resolution period each Ready node is scraped,
// and for each node, pod and container the last two samples of cumulative
// CPU time are kept with the last working set. Usage is the CPU rate between
// the two samples (window = their distance) and the latest working set.

import type { Node } from "../../api/core/types.js";
import type { ApiObject } from "../../machinery/index.js";
import { agentBaseUrl, type NodeAgentClient } from "../node-agents.js";

export interface Point {
  /** Unix milliseconds. */
  at: number;
  /** Cumulative CPU seconds. */
  cpu: number;
  /** Working set bytes. */
  memory: number;
}

/** The last two points of one series; `prev` absent until the second scrape. */
export interface Series {
  prev?: Point;
  last: Point;
  /** Container start (unix seconds): a restart resets the CPU counter, so the older point is dropped. */
  startTime?: number;
}

export interface NodeSeries {
  node: Series | undefined;
  /** "namespace/pod" → container name → series. */
  pods: Map<string, Map<string, Series>>;
  scrapedAt: number;
}

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp?: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments skipped; a malformed line is an error). */
export function parseExposition(text: string): ParsedSample[] {
  const out: ParsedSample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (m === null) throw new Error(`malformed metrics line ${JSON.stringify(line.slice(0, 120))}`);
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    const value = m[4] === "+Inf" ? Infinity : m[4] === "-Inf" ? -Infinity : Number(m[4]);
    out.push({ name: m[1]!, labels, value, ...(m[5] !== undefined ? { timestamp: Number(m[5]) } : {}) });
  }
  return out;
}

/** Merges one scrape's samples into the node's series. */
export function mergeScrape(previous: NodeSeries | undefined, samples: readonly ParsedSample[], scrapedAt: number): NodeSeries {
  const get = (name: string, labels?: (l: Record<string, string>) => boolean) => samples.filter((s) => s.name === name && (labels === undefined || labels(s.labels)));
  if (get("resource_scrape_error").some((s) => s.value !== 0)) throw new Error("the node agent reported a scrape error");
  const advance = (old: Series | undefined, point: Point, startTime?: number): Series => {
    const restarted = startTime !== undefined && old?.startTime !== undefined && startTime !== old.startTime;
    if (old === undefined || restarted || point.at <= old.last.at || point.cpu < old.last.cpu) return { last: point, ...(startTime !== undefined ? { startTime } : {}) };
    return { prev: old.last, last: point, ...(startTime !== undefined ? { startTime } : {}) };
  };
  const nodeCpu = get("node_cpu_usage_seconds_total")[0];
  const nodeMem = get("node_memory_working_set_bytes")[0];
  const node = nodeCpu !== undefined && nodeMem !== undefined
    ? advance(previous?.node, { at: nodeCpu.timestamp ?? scrapedAt, cpu: nodeCpu.value, memory: nodeMem.value })
    : undefined;
  const pods = new Map<string, Map<string, Series>>();
  const memory = new Map(get("container_memory_working_set_bytes").map((s) => [`${s.labels["namespace"]}/${s.labels["pod"]}/${s.labels["container"]}`, s.value]));
  const starts = new Map(get("container_start_time_seconds").map((s) => [`${s.labels["namespace"]}/${s.labels["pod"]}/${s.labels["container"]}`, s.value]));
  for (const s of get("container_cpu_usage_seconds_total")) {
    const { namespace, pod, container } = s.labels;
    if (!namespace || !pod || !container) continue;
    const mem = memory.get(`${namespace}/${pod}/${container}`);
    if (mem === undefined) continue;
    const podKey = `${namespace}/${pod}`;
    let containers = pods.get(podKey);
    if (containers === undefined) pods.set(podKey, (containers = new Map()));
    const start = starts.get(`${podKey}/${container}`);
    containers.set(container, advance(previous?.pods.get(podKey)?.get(container), { at: s.timestamp ?? scrapedAt, cpu: s.value, memory: mem }, start));
  }
  return { node, pods, scrapedAt };
}

/** Usage from a series with two points: nanocores and bytes, the window in seconds; undefined with one point. */
export function usageOf(s: Series | undefined): { nanoCores: number; bytes: number; at: number; windowSeconds: number } | undefined {
  if (s?.prev === undefined) return undefined;
  const seconds = (s.last.at - s.prev.at) / 1000;
  if (!(seconds > 0)) return undefined;
  return { nanoCores: Math.max(0, Math.round(((s.last.cpu - s.prev.cpu) / seconds) * 1e9)), bytes: s.last.memory, at: s.last.at, windowSeconds: seconds };
}

function isReady(node: Node): boolean {
  return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

export interface ScraperOptions {
  agents: NodeAgentClient;
  /** The Nodes now (the store's list). */
  nodes: () => Promise<readonly ApiObject[]>;
  /** How often every node is scraped (metrics-server's --metric-resolution). */
  resolutionMs: number;
  log: (line: string) => void;
}

const MAX_BODY = 8 * 1024 * 1024;

async function fetchText(agents: NodeAgentClient, url: string, timeoutMs: number): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  const res = await agents.get(url, signal);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error(`response larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (res.statusCode !== 200) throw new Error(`request failed, status: ${res.statusCode} ${Buffer.concat(chunks).toString("utf8").slice(0, 200).trim()}`);
  return Buffer.concat(chunks).toString("utf8");
}

/** The scrape loop and what it keeps, by node name. */
export class ResourceScraper {
  readonly #o: ScraperOptions;
  readonly #byNode = new Map<string, NodeSeries>();
  /**
   * Nodes whose last scrape failed, with the error: a failure is logged when it
   * starts or its message changes, and the recovery once, not every round
   * (1,000 simulated nodes without /metrics/resource were 4,000 lines a minute).
   */
  readonly #failing = new Map<string, string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #round: Promise<void> | undefined;

  constructor(options: ScraperOptions) {
    this.#o = options;
  }

  start(): void {
    const loop = (): void => {
      this.#round = this.scrapeOnce().finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(loop, this.#o.resolutionMs).unref();
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#round?.catch(() => {});
  }

  get(node: string): NodeSeries | undefined {
    return this.#byNode.get(node);
  }

  all(): ReadonlyMap<string, NodeSeries> {
    return this.#byNode;
  }

  /** One round over every Ready node; a node that fails keeps nothing until it answers again. */
  async scrapeOnce(): Promise<void> {
    const nodes = (await this.#o.nodes().catch(() => [])) as Node[];
    const ready = new Set<string>();
    const failedAnew = new Map<string, string[]>(); // error → nodes that started failing with it this round
    const recovered: string[] = [];
    await Promise.all(nodes.filter(isReady).map(async (node) => {
      const name = node.metadata.name!;
      ready.add(name);
      try {
        const text = await fetchText(this.#o.agents, `${agentBaseUrl(node)}/metrics/resource`, Math.max(1000, Math.min(10_000, this.#o.resolutionMs)));
        this.#byNode.set(name, mergeScrape(this.#byNode.get(name), parseExposition(text), Date.now()));
        if (this.#failing.delete(name)) recovered.push(name);
      } catch (err) {
        this.#byNode.delete(name);
        const message = err instanceof Error ? err.message : String(err);
        if (this.#failing.get(name) !== message) failedAnew.set(message, [...(failedAnew.get(message) ?? []), name]);
        this.#failing.set(name, message);
      }
    }));
    for (const name of [...this.#byNode.keys()]) if (!ready.has(name)) this.#byNode.delete(name);
    for (const name of [...this.#failing.keys()]) if (!ready.has(name)) this.#failing.delete(name);
    // One line per error and round, not one per node: a thousand simulated nodes without the endpoint were a thousand lines.
    for (const [message, names] of failedAnew) this.#o.log(`metrics: scraping ${nodeList(names)}: ${message} (logged again when the error changes)`);
    if (recovered.length > 0) this.#o.log(`metrics: scraping ${nodeList(recovered)}: answers again`);
  }
}

/** "node a", or "3 nodes (a, b, c)", the names sorted and cut after five. */
function nodeList(names: string[]): string {
  if (names.length === 1) return `node ${names[0]}`;
  const sorted = [...names].sort();
  const shown = sorted.slice(0, 5).join(", ");
  return `${names.length} nodes (${sorted.length > 5 ? `${shown} and ${sorted.length - 5} more` : shown})`;
}
