// Static pods (seed 001, "Local files": staticPodPath): one pod per manifest
// file (YAML or JSON), named <name>-<node>, its uid a hash of the manifest and
// node so an edited file is a new pod, as upstream. The directory is watched
// and rescanned every fileCheckFrequency; added, changed and removed files
// reach the sync loop as the full set of static pods.

import { configAnnotations } from "../../machinery/naming.js";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { defaultPodSpec } from "../../api/core/pod-defaults.js";
import type { Pod } from "../../api/core/types.js";

export interface StaticPodSourceOptions {
  dir: string;
  nodeName: string;
  keyDomain: string;
  periodMs: number;
  onChange: (pods: Pod[]) => void;
  log?: (line: string) => void;
}

export { configAnnotations } from "../../machinery/naming.js";

/** A manifest's text as the static pod the agent runs. */
export function staticPod(text: string, file: string, o: { nodeName: string; keyDomain: string }): Pod {
  const doc = parseYaml(text) as Pod | null;
  if (!doc || typeof doc !== "object" || doc.kind !== "Pod") throw new Error(`${file}: expected a Pod manifest (kind: Pod)`);
  const pod = structuredClone(doc);
  pod.metadata ??= {};
  if (!pod.metadata.name) throw new Error(`${file}: metadata.name is required`);
  const uid = createHash("md5").update(o.nodeName).update(text).digest("hex");
  const a = configAnnotations(o.keyDomain);
  pod.metadata = {
    ...pod.metadata,
    name: `${pod.metadata.name}-${o.nodeName}`,
    namespace: pod.metadata.namespace || "default",
    uid: `${uid.slice(0, 8)}-${uid.slice(8, 12)}-${uid.slice(12, 16)}-${uid.slice(16, 20)}-${uid.slice(20)}`,
    annotations: { ...(pod.metadata.annotations ?? {}), [a.source]: "file", [a.hash]: uid },
  };
  const spec = (pod.spec ??= {});
  spec.nodeName = o.nodeName;
  spec.restartPolicy ??= "Always";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= "ClusterFirst";
  defaultPodSpec(spec);
  pod.status = { phase: "Pending" };
  return pod;
}

export class StaticPodSource {
  readonly #o: StaticPodSourceOptions;
  #last = "";
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #errors = new Map<string, string>();
  #stopped = false;
  #pending: NodeJS.Timeout | undefined;

  constructor(options: StaticPodSourceOptions) {
    this.#o = options;
  }

  /** Scans now (which also starts watching the directory), then every periodMs until the signal fires. */
  start(signal: AbortSignal): void {
    this.scan();
    this.#timer = setInterval(() => this.scan(), this.#o.periodMs);
    this.#timer.unref();
    signal.addEventListener("abort", () => {
      this.#stopped = true;
      clearInterval(this.#timer);
      clearTimeout(this.#pending);
      this.#watcher?.close();
      this.#watcher = undefined;
    }, { once: true });
  }

  #watch(): void {
    if (this.#stopped) return;
    try {
      // Editors write in bursts: rescan once things settle.
      this.#watcher = watch(this.#o.dir, () => {
        clearTimeout(this.#pending);
        this.#pending = setTimeout(() => this.scan(), 50);
      });
      this.#watcher.on("error", () => (this.#watcher = undefined));
    } catch {
      // The directory may appear later; the periodic rescan finds it (and retries the watch).
    }
  }

  /** Reads every manifest now; reports the set when it changed. */
  scan(): Pod[] {
    const pods: Pod[] = [];
    if (this.#stopped) return pods;
    let names: string[] = [];
    try {
      names = readdirSync(this.#o.dir).filter((n) => !n.startsWith(".")).sort();
      if (!this.#watcher) this.#watch();
    } catch {
      names = [];
    }
    for (const name of names) {
      const file = join(this.#o.dir, name);
      try {
        if (!statSync(file).isFile()) continue;
        pods.push(staticPod(readFileSync(file, "utf8"), file, this.#o));
        this.#errors.delete(file);
      } catch (err) {
        const message = (err as Error).message;
        if (this.#errors.get(file) !== message) this.#o.log?.(`static pods: skipping ${file}: ${message}`);
        this.#errors.set(file, message);
      }
    }
    const key = pods.map((p) => p.metadata.uid).join(",");
    if (key !== this.#last) {
      this.#last = key;
      this.#o.onChange(pods);
    }
    return pods;
  }
}
