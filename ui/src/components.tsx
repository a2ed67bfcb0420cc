// Small shared pieces: the virtualized table (only the rows in view are in
// the DOM, so a 1,000-pod list renders and updates in a few milliseconds),
// ages, conditions and error boxes.

import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { TableColumn } from "./api.js";

export interface Row {
  key: string;
  cells: ComponentChildren[];
  href?: string;
}

const ROW_HEIGHT = 28;

export function VirtualTable({ columns, rows, maxHeight = 640, empty = "No objects." }: { columns: string[]; rows: Row[]; maxHeight?: number; empty?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const height = Math.min(maxHeight, ROW_HEIGHT * Math.max(rows.length, 1) + ROW_HEIGHT + 2);
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - 5);
  const count = Math.ceil(height / ROW_HEIGHT) + 10;
  const visible = rows.slice(first, first + count);
  return (
    <div class="vtable" ref={box} style={{ height: `${height}px` }} onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)} data-rows={rows.length}>
      <table>
        <thead>
          <tr>{columns.map((c) => <th key={c}>{c}</th>)}</tr>
        </thead>
        <tbody>
          {first > 0 && <tr style={{ height: `${first * ROW_HEIGHT}px` }} aria-hidden="true" />}
          {visible.map((row) => (
            <tr key={row.key} class={row.href ? "link" : ""} data-key={row.key} onClick={row.href ? () => (location.hash = row.href!) : undefined}>
              {row.cells.map((c, i) => <td key={i}>{c}</td>)}
            </tr>
          ))}
          {first + count < rows.length && <tr style={{ height: `${(rows.length - first - count) * ROW_HEIGHT}px` }} aria-hidden="true" />}
        </tbody>
      </table>
      {rows.length === 0 && <div class="empty">{empty}</div>}
    </div>
  );
}

/** The Table's columns a wide view shows (priority 0 only, as kubectl without -o wide). */
export function mainColumns(columns: TableColumn[]): number[] {
  return columns.map((c, i) => (c.priority === 0 ? i : -1)).filter((i) => i >= 0);
}

export function age(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return "";
  const s = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** Re-renders every `ms` (ages move on without any event). */
export function useNow(ms = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function ErrorBox({ message }: { message: string | undefined }) {
  if (!message) return null;
  return <div class="error" role="alert">{message}</div>;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export function Conditions({ conditions, good = (c) => c.status === "True" }: { conditions: Condition[] | undefined; good?: (c: Condition) => boolean }) {
  if (!conditions?.length) return <span class="muted">none</span>;
  return (
    <span class="conditions">
      {conditions.map((c) => (
        <span key={c.type} class={`badge ${good(c) ? "ok" : "bad"}`} title={[c.reason, c.message].filter(Boolean).join(": ")}>
          {c.type}={c.status}
        </span>
      ))}
    </span>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section>
      <h2>
        {title}
        {actions && <span class="actions">{actions}</span>}
      </h2>
      {children}
    </section>
  );
}

/** A container picker (logs, exec). */
export function ContainerSelect({ names, value, onChange, label }: { names: string[]; value: string; onChange: (name: string) => void; label: string }) {
  return (
    <label>
      container{" "}
      <select value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)} aria-label={label}>
        {names.map((n) => <option key={n} value={n}>{n}</option>)}
      </select>
    </label>
  );
}
