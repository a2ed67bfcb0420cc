// events (core v1): what `kubectl describe` and `kubectl get events` read.
// PUT may create (recorders update counts that way); validation follows
// upstream's rules for old-style (no eventTime) and new-style events; the
// field selectors include everything `describe` filters by.

import { field, isDNS1123Subdomain, isQualifiedName, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition, type TableColumn } from "../resource.js";
import { formatAge } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import type { Event, ObjectReference } from "./types.js";

const LIMIT_128 = 128;
const NOTE_LIMIT = 1024;

export function validateEvent(ev: Event, naming: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const ns = ev.metadata.namespace ?? "";
  const involvedNs = ev.involvedObject?.namespace ?? "";
  const mismatch = () => field.invalid("involvedObject.namespace", involvedNs, "does not match event.namespace");
  if (!ev.eventTime) {
    if (involvedNs === "") {
      if (ns !== "" && ns !== "default") errs.push(mismatch());
    } else if (ns !== involvedNs) errs.push(mismatch());
  } else {
    if (involvedNs === "" && ns !== "default" && ns !== naming.systemNamespace) errs.push(mismatch());
    const rc = ev.reportingComponent ?? "";
    if (!rc) errs.push(field.required("reportingComponent", ""));
    for (const msg of isQualifiedName(rc)) errs.push(field.invalid("reportingComponent", rc, msg));
    const ri = ev.reportingInstance ?? "";
    if (!ri) errs.push(field.required("reportingInstance", ""));
    if (ri.length > LIMIT_128) errs.push(field.tooLong("reportingInstance", LIMIT_128));
    if (!ev.action) errs.push(field.required("action", ""));
    if ((ev.action ?? "").length > LIMIT_128) errs.push(field.tooLong("action", LIMIT_128));
    if (!ev.reason) errs.push(field.required("reason", ""));
    if ((ev.reason ?? "").length > LIMIT_128) errs.push(field.tooLong("reason", LIMIT_128));
    if ((ev.message ?? "").length > NOTE_LIMIT) errs.push(field.tooLong("message", NOTE_LIMIT));
  }
  for (const msg of isDNS1123Subdomain(ns)) errs.push(field.invalid("namespace", ns, msg));
  return errs;
}

export const EVENT_COLUMNS: readonly TableColumn[] = [
  { name: "Last Seen", type: "string", description: "When the event last occurred.", priority: 0 },
  { name: "Type", type: "string", description: "Normal or Warning.", priority: 0 },
  { name: "Reason", type: "string", description: "Short, machine-readable reason.", priority: 0 },
  { name: "Object", type: "string", description: "The object the event is about.", priority: 0 },
  { name: "Subobject", type: "string", description: "The part of the object, e.g. spec.containers{name}.", priority: 1 },
  { name: "Source", type: "string", description: "The component (and host) that reported the event.", priority: 1 },
  { name: "Message", type: "string", description: "Human-readable description.", priority: 0 },
  { name: "First Seen", type: "string", description: "When the event first occurred.", priority: 1 },
  { name: "Count", type: "string", description: "How many times the event occurred.", priority: 1 },
  { name: "Name", type: "string", format: "name", description: "Name of the event object.", priority: 1 },
];

/** The cells of one event, as upstream's printEvent computes them. */
export function eventCells(ev: Event, now: Date): unknown[] {
  const first = ev.firstTimestamp ? formatAge(ev.firstTimestamp, now) : formatAge(ev.eventTime, now);
  let last = ev.lastTimestamp ? formatAge(ev.lastTimestamp, now) : first;
  let count = ev.count ?? 0;
  if (ev.series) {
    last = formatAge(ev.series.lastObservedTime, now);
    count = ev.series.count ?? 0;
  } else if (count === 0) {
    count = 1; // singleton events of the new API carry no count
  }
  const obj = ev.involvedObject ?? {};
  const target = obj.name ? `${(obj.kind ?? "").toLowerCase()}/${obj.name}` : (obj.kind ?? "").toLowerCase();
  const component = ev.source?.component || ev.reportingComponent || "";
  const host = ev.source?.host || ev.reportingInstance || "";
  const source = host ? `${component}, ${host}` : component;
  return [last, ev.type ?? "", ev.reason ?? "", target, obj.fieldPath ?? "", source, (ev.message ?? "").trim(), first, count, ev.metadata.name ?? ""];
}

const REFERENCE_FIELDS = ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"] as const;

/** Field selectors `<prefix>.kind`, `.namespace`, ... over the event's object reference (core: involvedObject; events/v1: regarding). */
export function referenceSelectors<T>(prefix: string, ref: (e: T) => ObjectReference | undefined): Record<string, (e: T) => string> {
  return Object.fromEntries(REFERENCE_FIELDS.map((f) => [`${prefix}.${f}`, (e: T) => ref(e)?.[f] ?? ""]));
}

export function eventsResource(naming: Naming): ResourceDefinition {
  return defineResource<Event>({
    group: "",
    versions: ["v1"],
    resource: "events",
    singular: "event",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"],
    schema: `${CORE_V1}.Event`,
    allowCreateOnUpdate: true,
    generation: false,

    validate: (ev) => validateEvent(ev, naming),
    validateUpdate: (ev) => validateEvent(ev, naming),

    table: { columns: EVENT_COLUMNS, cells: eventCells },
    fieldSelectors: {
      ...referenceSelectors<Event>("involvedObject", (e) => e.involvedObject),
      reason: (e) => e.reason ?? "",
      reportingComponent: (e) => e.reportingComponent ?? "",
      source: (e) => e.source?.component || e.reportingComponent || "",
      type: (e) => e.type ?? "",
    },
  });
}
