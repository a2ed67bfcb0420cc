// One object: a summary (per kind where it helps: pods, workloads, nodes,
// services), its events, its YAML with edit and server-side apply, delete,
// scale and rollout restart; pods add logs, an exec terminal and charts.
// Everything follows watches.

import { useEffect, useState } from "preact/hooks";
import { ApiError, type KObject } from "../api.js";
import { collectionPath, find, type Discovery, type Resource } from "../discovery.js";
import { useLiveObject, useLiveObjects } from "../live.js";
import { age, Conditions, ErrorBox, Section, useNow, VirtualTable, type Condition } from "../components.js";
import { apply, editableYaml, remove, restart, restartable, scale } from "../actions.js";
import { objectHref } from "../router.js";
import { PodSummary, PodsOf, type Pod } from "./pods.js";
import { LogsView } from "./logs.js";
import { Terminal } from "./terminal.js";
import { PodChart } from "./charts.js";

export function ObjectView({ d, group, resource, namespace, name, tab }: { d: Discovery; group: string; resource: string; namespace: string | undefined; name: string; tab: string | undefined }) {
  const r = find(d, group, resource);
  const live = useLiveObject<KObject>(r ? collectionPath(r, namespace) : undefined, name);
  const now = useNow();
  if (r === undefined) return <ErrorBox message={`the server does not serve ${resource}${group ? `.${group}` : ""}`} />;
  const o = live.object;
  const isPod = r.group === "" && r.resource === "pods";
  const tabs = ["summary", "yaml", "events", ...(isPod ? ["logs", "exec", "metrics"] : [])];
  const current = tab && tabs.includes(tab) ? tab : "summary";
  return (
    <div class="object">
      <h1>
        <span class="kind">{r.kind}</span> {namespace ? `${namespace}/` : ""}
        {name}
        {o && <span class="muted small"> · age {age(o.metadata.creationTimestamp, now)}</span>}
        {o?.metadata.deletionTimestamp && <span class="badge bad">Terminating</span>}
      </h1>
      <ErrorBox message={live.error} />
      {o === null && <ErrorBox message={`${r.resource} "${name}" not found`} />}
      {o && <Actions d={d} r={r} o={o} />}
      <nav class="tabs">
        {tabs.map((t) => (
          <a key={t} href={objectHref(r.group, r.resource, namespace, name, t)} class={t === current ? "active" : ""}>
            {t}
          </a>
        ))}
      </nav>
      {o && current === "summary" && <Summary d={d} r={r} o={o} />}
      {o && current === "yaml" && <YamlEditor r={r} o={o} />}
      {o && current === "events" && <Events d={d} o={o} />}
      {o && current === "logs" && <LogsView pod={o as Pod} />}
      {o && current === "exec" && <Terminal pod={o as Pod} />}
      {o && current === "metrics" && <PodChart d={d} pod={o as Pod} />}
    </div>
  );
}

function Actions({ d, r, o }: { d: Discovery; r: Resource; o: KObject }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const spec = o["spec"] as { replicas?: number } | undefined;
  const [replicas, setReplicas] = useState(String(spec?.replicas ?? 1));
  useEffect(() => setReplicas(String(spec?.replicas ?? 1)), [spec?.replicas]);
  const ns = o.metadata.namespace;
  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await what();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="toolbar">
      {r.subresources.includes("scale") && (
        <form
          class="scale"
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(replicas);
            if (!Number.isInteger(n) || n < 0) return setError("replicas must be a whole number, 0 or more");
            void run(() => scale(r, ns, o.metadata.name, n));
          }}
        >
          <label>
            replicas <input type="number" min="0" value={replicas} onInput={(e) => setReplicas((e.currentTarget as HTMLInputElement).value)} aria-label="replicas" />
          </label>
          <button type="submit" disabled={busy}>Scale</button>
        </form>
      )}
      {restartable(r) && (
        <button disabled={busy} onClick={() => void run(() => restart(d, r, ns, o.metadata.name))}>
          Restart rollout
        </button>
      )}
      {r.verbs.includes("delete") && (
        <button class="danger" disabled={busy} onClick={() => confirm(`Delete ${r.kind} ${o.metadata.name}?`) && void run(() => remove(r, ns, o.metadata.name))}>
          Delete
        </button>
      )}
      <ErrorBox message={error} />
    </div>
  );
}

function KeyValues({ map }: { map: Record<string, string> | undefined }) {
  const entries = Object.entries(map ?? {});
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <span class="kv">
      {entries.map(([k, v]) => (
        <span key={k} class="badge" title={v}>
          {k}={v.length > 60 ? `${v.slice(0, 60)}…` : v}
        </span>
      ))}
    </span>
  );
}

function Summary({ d, r, o }: { d: Discovery; r: Resource; o: KObject }) {
  const status = o["status"] as { conditions?: Condition[] } | undefined;
  const spec = o["spec"] as { selector?: { matchLabels?: Record<string, string> } | Record<string, string> } | undefined;
  const isPod = r.group === "" && r.resource === "pods";
  const selector = r.group === "" && r.resource === "services" ? (spec?.selector as Record<string, string> | undefined) : (spec?.selector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
  return (
    <div>
      <table class="fields">
        <tbody>
          <tr><th>Labels</th><td><KeyValues map={o.metadata.labels} /></td></tr>
          <tr><th>Annotations</th><td><KeyValues map={o.metadata.annotations} /></td></tr>
          {o.metadata.ownerReferences?.length ? (
            <tr><th>Owners</th><td>{o.metadata.ownerReferences.map((ref) => <span key={ref.uid} class="badge">{ref.kind}/{ref.name}</span>)}</td></tr>
          ) : null}
          {!isPod && Array.isArray(status?.conditions) && <tr><th>Conditions</th><td><Conditions conditions={status!.conditions} /></td></tr>}
        </tbody>
      </table>
      {isPod && <PodSummary pod={o as Pod} />}
      {!isPod && selector && Object.keys(selector).length > 0 && o.metadata.namespace && <PodsOf d={d} namespace={o.metadata.namespace} selector={selector} />}
      {r.group === "apps" && r.resource === "deployments" && o.metadata.namespace && <Owned d={d} o={o} group="apps" resource="replicasets" />}
      {r.group === "batch" && r.resource === "cronjobs" && o.metadata.namespace && <Owned d={d} o={o} group="batch" resource="jobs" />}
      {r.group === "" && r.resource === "services" && o.metadata.namespace && <Endpoints d={d} o={o} />}
    </div>
  );
}

function Owned({ d, o, group, resource }: { d: Discovery; o: KObject; group: string; resource: string }) {
  const r = find(d, group, resource);
  const live = useLiveObjects<KObject>(r ? collectionPath(r, o.metadata.namespace) : undefined);
  if (!r) return null;
  const mine = live.items.filter((x) => x.metadata.ownerReferences?.some((ref) => ref.uid === o.metadata.uid));
  return (
    <Section title={`${r.kind}s (${mine.length})`}>
      <VirtualTable
        columns={["Name", "Desired", "Ready", "Age"]}
        rows={mine.map((x) => {
          const s = x["spec"] as { replicas?: number; parallelism?: number } | undefined;
          const st = x["status"] as { readyReplicas?: number; succeeded?: number } | undefined;
          return { key: x.metadata.uid ?? x.metadata.name, cells: [x.metadata.name, String(s?.replicas ?? s?.parallelism ?? ""), String(st?.readyReplicas ?? st?.succeeded ?? 0), age(x.metadata.creationTimestamp)], href: objectHref(group, resource, x.metadata.namespace, x.metadata.name) };
        })}
      />
    </Section>
  );
}

function Endpoints({ d, o }: { d: Discovery; o: KObject }) {
  const r = find(d, "", "endpoints");
  const live = useLiveObject<KObject>(r ? collectionPath(r, o.metadata.namespace) : undefined, o.metadata.name);
  const subsets = (live.object?.["subsets"] as { addresses?: { ip: string; targetRef?: { name: string } }[]; notReadyAddresses?: { ip: string }[]; ports?: { port: number; name?: string; protocol?: string }[] }[] | undefined) ?? [];
  const rows = subsets.flatMap((s, i) => [
    ...(s.addresses ?? []).map((a) => ({ key: `${i}/${a.ip}`, cells: [a.ip, a.targetRef?.name ?? "", "yes", (s.ports ?? []).map((p) => `${p.port}/${p.protocol ?? "TCP"}`).join(", ")] })),
    ...(s.notReadyAddresses ?? []).map((a) => ({ key: `${i}/nr/${a.ip}`, cells: [a.ip, "", "no", (s.ports ?? []).map((p) => `${p.port}/${p.protocol ?? "TCP"}`).join(", ")] })),
  ]);
  return (
    <Section title={`Endpoints (${rows.length})`}>
      <VirtualTable columns={["Address", "Pod", "Ready", "Ports"]} rows={rows} empty="No endpoints." />
    </Section>
  );
}

export function Events({ d, o }: { d: Discovery; o: KObject }) {
  const r = find(d, "", "events");
  const live = useLiveObjects<KObject>(r ? collectionPath(r, o.metadata.namespace) : undefined, { fieldSelector: `involvedObject.uid=${o.metadata.uid ?? ""}` });
  const now = useNow();
  const items = [...live.items].sort((a, b) => time(b).localeCompare(time(a)));
  return (
    <Section title={`Events (${items.length})`}>
      <ErrorBox message={live.error} />
      <VirtualTable
        columns={["Type", "Reason", "Age", "From", "Message"]}
        rows={items.map((e) => ({ key: e.metadata.uid ?? e.metadata.name, cells: [String(e["type"] ?? ""), String(e["reason"] ?? ""), age(time(e), now), String((e["source"] as { component?: string } | undefined)?.component ?? e["reportingComponent"] ?? ""), String(e["message"] ?? "")] }))}
        empty="No events."
      />
    </Section>
  );
}

export function time(e: KObject): string {
  return String(e["lastTimestamp"] ?? e["eventTime"] ?? e.metadata.creationTimestamp ?? "");
}

function YamlEditor({ r, o }: { r: Resource; o: KObject }) {
  const [text, setText] = useState(() => editableYaml(o));
  const [dirty, setDirty] = useState(false);
  const [error, setError] = useState<string>();
  const [conflicts, setConflicts] = useState<string[]>();
  const [note, setNote] = useState<string>();
  // The object moves on under a clean editor (watch); an edit in progress is kept.
  useEffect(() => {
    if (!dirty) setText(editableYaml(o));
  }, [o.metadata.resourceVersion]);
  const submit = async (force: boolean) => {
    setError(undefined);
    setConflicts(undefined);
    setNote(undefined);
    try {
      const out = await apply(r, o.metadata.namespace, o.metadata.name, text, force);
      setDirty(false);
      setText(editableYaml(out));
      setNote(`applied (resourceVersion ${out.metadata.resourceVersion}) as field manager "dashboard"`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 409 && err.status?.reason === "Conflict" && err.status.details?.causes?.length) {
        setConflicts(err.status.details.causes.map((c) => `${c.field ?? ""}: ${c.message ?? ""}`));
      }
      setError((err as Error).message);
    }
  };
  return (
    <div class="yaml">
      <div class="toolbar">
        <button onClick={() => void submit(false)} disabled={!dirty}>Apply</button>
        <button onClick={() => { setText(editableYaml(o)); setDirty(false); setError(undefined); setConflicts(undefined); }} disabled={!dirty}>Revert</button>
        {conflicts && <button class="danger" onClick={() => void submit(true)}>Force apply (take over the fields)</button>}
        {dirty && <span class="muted">edited: not applied</span>}
        {note && <span class="ok-text">{note}</span>}
      </div>
      <ErrorBox message={error} />
      {conflicts && (
        <ul class="conflicts" aria-label="conflicts">
          {conflicts.map((c) => <li key={c}>{c}</li>)}
        </ul>
      )}
      <textarea
        spellcheck={false}
        aria-label="YAML"
        value={text}
        onInput={(e) => {
          setText((e.currentTarget as HTMLTextAreaElement).value);
          setDirty(true);
        }}
      />
    </div>
  );
}
