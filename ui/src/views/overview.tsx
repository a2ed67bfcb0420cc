// The cluster at a glance: nodes with their conditions and pressure, pods by
// phase, the latest warnings, node CPU and memory. All live.

import type { KObject } from "../api.js";
import { collectionPath, find, type Discovery } from "../discovery.js";
import { useLiveObjects } from "../live.js";
import { age, Conditions, ErrorBox, Section, useNow, VirtualTable, type Condition } from "../components.js";
import { objectHref } from "../router.js";
import { NodeCharts } from "./charts.js";
import { time } from "./object.js";
import type { Pod } from "./pods.js";
import { KindTable } from "./list.js";

interface Node extends KObject {
  status?: { conditions?: Condition[]; capacity?: Record<string, string>; allocatable?: Record<string, string>; nodeInfo?: { kubeletVersion?: string; osImage?: string } };
  spec?: { unschedulable?: boolean };
}

const PHASES = ["Pending", "Running", "Succeeded", "Failed", "Unknown"];

export function Overview({ d, namespace }: { d: Discovery; namespace: string | undefined }) {
  const nodesR = find(d, "", "nodes");
  const podsR = find(d, "", "pods");
  const eventsR = find(d, "", "events");
  const nodes = useLiveObjects<Node>(nodesR ? collectionPath(nodesR) : undefined);
  const pods = useLiveObjects<Pod>(podsR ? collectionPath(podsR, namespace) : undefined);
  const warnings = useLiveObjects<KObject>(eventsR ? collectionPath(eventsR, namespace) : undefined, { fieldSelector: "type=Warning" });
  const now = useNow();
  const counts = new Map(PHASES.map((p) => [p, 0]));
  for (const p of pods.items) counts.set(p.status?.phase ?? "Pending", (counts.get(p.status?.phase ?? "Pending") ?? 0) + 1);
  const recent = [...warnings.items].sort((a, b) => time(b).localeCompare(time(a))).slice(0, 50);
  // Ready is good when True; every other condition (the pressures, NetworkUnavailable) when False.
  const good = (c: Condition) => (c.type === "Ready" ? c.status === "True" : c.status === "False");
  return (
    <div class="overview">
      <Section title={`Nodes (${nodes.items.length})`}>
        <ErrorBox message={nodes.error} />
        <VirtualTable
          columns={["Name", "Ready", "Pressure", "CPU", "Memory", "Pods", "Version", "Age"]}
          rows={nodes.items.map((n) => {
            const conds = n.status?.conditions ?? [];
            const ready = conds.find((c) => c.type === "Ready");
            const pressure = conds.filter((c) => c.type !== "Ready");
            return {
              key: n.metadata.name,
              cells: [
                n.metadata.name,
                <span class={`badge ${ready?.status === "True" ? "ok" : "bad"}`}>{ready?.status === "True" ? "Ready" : "NotReady"}{n.spec?.unschedulable ? ",SchedulingDisabled" : ""}</span>,
                <Conditions conditions={pressure} good={good} />,
                n.status?.allocatable?.["cpu"] ?? "",
                n.status?.allocatable?.["memory"] ?? "",
                `${pods.items.filter((p) => p.spec?.nodeName === n.metadata.name).length} / ${n.status?.allocatable?.["pods"] ?? "?"}`,
                n.status?.nodeInfo?.kubeletVersion ?? "",
                age(n.metadata.creationTimestamp, now),
              ],
              href: objectHref("", "nodes", undefined, n.metadata.name),
            };
          })}
          empty={nodes.loaded ? "No nodes." : "Loading…"}
        />
      </Section>
      <Section title={`Pods${namespace ? ` in ${namespace}` : ""} (${pods.items.length})`}>
        <ErrorBox message={pods.error} />
        <div class="phases">
          {PHASES.map((p) => (
            <div key={p} class={`phase phase-${p.toLowerCase()}`} data-phase={p}>
              <div class="count">{counts.get(p)}</div>
              <div>{p}</div>
            </div>
          ))}
        </div>
      </Section>
      <Section title="Node CPU and memory">
        <NodeCharts d={d} />
      </Section>
      <Section title={`Recent warnings (${recent.length})`}>
        <ErrorBox message={warnings.error} />
        <VirtualTable
          columns={["Age", "Namespace", "Object", "Reason", "Message"]}
          rows={recent.map((e) => {
            const ref = e["involvedObject"] as { kind?: string; name?: string } | undefined;
            return { key: e.metadata.uid ?? e.metadata.name, cells: [age(time(e), now), e.metadata.namespace ?? "", `${ref?.kind ?? ""}/${ref?.name ?? ""}`, String(e["reason"] ?? ""), String(e["message"] ?? "")] };
          })}
          empty="No warnings."
          maxHeight={360}
        />
      </Section>
    </div>
  );
}

export function Workloads({ d, namespace }: { d: Discovery; namespace: string | undefined }) {
  const kinds: [string, string][] = [["apps", "deployments"], ["apps", "statefulsets"], ["apps", "daemonsets"], ["batch", "jobs"], ["batch", "cronjobs"], ["apps", "replicasets"]];
  return (
    <div>
      {kinds.map(([g, r]) => <KindTable key={r} d={d} r={find(d, g, r)} namespace={namespace} maxHeight={320} />)}
    </div>
  );
}

export function Services({ d, namespace }: { d: Discovery; namespace: string | undefined }) {
  return (
    <div>
      <KindTable d={d} r={find(d, "", "services")} namespace={namespace} maxHeight={400} />
      <KindTable d={d} r={find(d, "", "endpoints")} namespace={namespace} maxHeight={400} />
    </div>
  );
}
