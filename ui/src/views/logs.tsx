// A container's log, following (follow=true) as it grows, with the container
// and the previous instance to choose.

import { useEffect, useRef, useState } from "preact/hooks";
import { isNetworkError, sleep, textStream } from "../api.js";
import { objectPath } from "../discovery.js";
import { ContainerSelect, ErrorBox } from "../components.js";
import type { Pod } from "./pods.js";

const MAX_CHARS = 2_000_000;

export function LogsView({ pod }: { pod: Pod }) {
  const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name);
  const [container, setContainer] = useState(names[0] ?? "");
  const [previous, setPrevious] = useState(false);
  const [text, setText] = useState("");
  const [error, setError] = useState<string>();
  const [ended, setEnded] = useState(false);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const abort = new AbortController();
    setText("");
    setError(undefined);
    setEnded(false);
    const q = new URLSearchParams({ container, tailLines: "1000", timestamps: "false" });
    if (previous) q.set("previous", "true");
    else q.set("follow", "true");
    const path = `${objectPath({ group: "", version: "v1", resource: "pods", namespaced: true }, pod.metadata.namespace, pod.metadata.name)}/log?${q}`;
    void (async () => {
      // A dropped connection (the browser's network-change reset) opens the log again from its tail.
      for (let tries = 0; !abort.signal.aborted && tries < 20; tries++) {
        try {
          let all = "";
          for await (const chunk of textStream(path, abort.signal)) {
            all += chunk;
            if (all.length > MAX_CHARS) all = all.slice(all.length - MAX_CHARS);
            setText(all);
          }
          setEnded(true);
          return;
        } catch (err) {
          if (abort.signal.aborted) return;
          if (!isNetworkError(err)) return setError((err as Error).message);
          await sleep(300, abort.signal);
        }
      }
    })();
    return () => abort.abort();
  }, [pod.metadata.uid, container, previous]);
  useEffect(() => {
    const el = box.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 80) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <div class="logs">
      <div class="toolbar">
        <ContainerSelect names={names} value={container} onChange={setContainer} label="container" />
        <label>
          <input type="checkbox" checked={previous} onChange={(e) => setPrevious((e.currentTarget as HTMLInputElement).checked)} /> previous instance
        </label>
        <span class="muted">{previous ? "the last terminated instance" : ended ? "stream ended" : "following"}</span>
      </div>
      <ErrorBox message={error} />
      <pre class="log" ref={box} data-testid="log">{text}</pre>
    </div>
  );
}
