// Pods: the list (the API's Table, virtualized), a pod's status, restarts,
// node, age, conditions and containers, and the pods a workload selects.

import type { KObject } from "../api.js";
import { find, type Discovery } from "../discovery.js";
import { age, Conditions, Section, useNow, VirtualTable, type Condition } from "../components.js";
import { objectHref } from "../router.js";
import { KindTable } from "./list.js";

interface ContainerStatus {
  name: string;
  image?: string;
  ready?: boolean;
  restartCount?: number;
  state?: Record<string, { reason?: string; message?: string; startedAt?: string; exitCode?: number }>;
  lastState?: Record<string, { reason?: string; exitCode?: number; finishedAt?: string }>;
}

export interface Pod extends KObject {
  spec?: { nodeName?: string; containers: { name: string; image?: string }[]; initContainers?: { name: string; image?: string }[] };
  status?: { phase?: string; podIP?: string; qosClass?: string; reason?: string; message?: string; startTime?: string; conditions?: Condition[]; containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] };
}

export function restarts(p: Pod): number {
  return (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

function stateText(s: ContainerStatus["state"]): string {
  if (!s) return "";
  const [name, detail] = Object.entries(s)[0] ?? ["", {}];
  return [name, detail?.reason, detail?.exitCode !== undefined ? `exit ${detail.exitCode}` : undefined].filter((x) => x !== undefined && x !== "").join(" · ");
}

export function PodSummary({ pod }: { pod: Pod }) {
  const now = useNow();
  const statuses = new Map([...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].map((c) => [c.name, c]));
  const containers = [...(pod.spec?.initContainers ?? []).map((c) => ({ ...c, init: true })), ...(pod.spec?.containers ?? []).map((c) => ({ ...c, init: false }))];
  return (
    <div>
      <table class="fields pod-status">
        <tbody>
          <tr><th>Status</th><td data-field="phase">{pod.metadata.deletionTimestamp ? "Terminating" : pod.status?.reason ?? pod.status?.phase ?? "Pending"}{pod.status?.message ? ` (${pod.status.message})` : ""}</td></tr>
          <tr><th>Node</th><td>{pod.spec?.nodeName ? <a href={objectHref("", "nodes", undefined, pod.spec.nodeName)}>{pod.spec.nodeName}</a> : <span class="muted">not scheduled</span>}</td></tr>
          <tr><th>Pod IP</th><td>{pod.status?.podIP ?? ""}</td></tr>
          <tr><th>Restarts</th><td data-field="restarts">{restarts(pod)}</td></tr>
          <tr><th>Age</th><td>{age(pod.metadata.creationTimestamp, now)}</td></tr>
          <tr><th>QoS</th><td>{pod.status?.qosClass ?? ""}</td></tr>
          <tr><th>Conditions</th><td><Conditions conditions={pod.status?.conditions} /></td></tr>
        </tbody>
      </table>
      <Section title="Containers">
        <VirtualTable
          columns={["Name", "Image", "State", "Ready", "Restarts", "Last state"]}
          rows={containers.map((c) => {
            const s = statuses.get(c.name);
            return { key: c.name, cells: [`${c.name}${c.init ? " (init)" : ""}`, c.image ?? "", stateText(s?.state), s?.ready ? "yes" : "no", String(s?.restartCount ?? 0), stateText(s?.lastState)] };
          })}
        />
      </Section>
    </div>
  );
}

/** The pods a workload or service selects, live. */
export function PodsOf({ d, namespace, selector }: { d: Discovery; namespace: string; selector: Record<string, string> }) {
  const labelSelector = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(",");
  return <KindTable d={d} r={find(d, "", "pods")} namespace={namespace} title="Pods" query={{ labelSelector }} />;
}

export function PodsView({ d, namespace }: { d: Discovery; namespace: string | undefined }) {
  return <KindTable d={d} r={find(d, "", "pods")} namespace={namespace} title="Pods" maxHeight={Math.max(400, innerHeight - 160)} />;
}
