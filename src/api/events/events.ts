// events.<suffix>/v1 Event: the same stored objects as core v1 events, read
// and written through a field mapping (note↔message, regarding↔involvedObject,
// reportingController↔reportingComponent, deprecated*↔the old core fields).
// The declaration's storedAs converts on every read and write, so get, list,
// watch, create, update, patch, delete and deletecollection all see one object.
// Validation is upstream's strict one for this API on top of core's.

import { field, type ApiObject, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { EVENT_COLUMNS, eventCells, referenceSelectors, validateEvent } from "../core/events.js";
import type { Event, ObjectReference } from "../core/types.js";
import { EVENTS_V1 } from "./schemas.js";
import { copyJson } from "../../machinery/patch/json-value.js";

export interface EventV1 extends ApiObject {
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string | null } | null;
  reportingController?: string;
  reportingInstance?: string;
  action?: string;
  reason?: string;
  regarding?: ObjectReference;
  related?: ObjectReference | null;
  note?: string;
  type?: string;
  deprecatedSource?: { component?: string; host?: string } | null;
  deprecatedFirstTimestamp?: string | null;
  deprecatedLastTimestamp?: string | null;
  deprecatedCount?: number;
}

/** [events/v1 field, core field]: the one mapping both directions use. */
const FIELD_MAP: readonly (readonly [string, string])[] = [
  ["eventTime", "eventTime"],
  ["series", "series"],
  ["reportingController", "reportingComponent"],
  ["reportingInstance", "reportingInstance"],
  ["action", "action"],
  ["reason", "reason"],
  ["regarding", "involvedObject"],
  ["related", "related"],
  ["note", "message"],
  ["type", "type"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
];

function mapFields(from: ApiObject, apiVersion: string, pairs: readonly (readonly [string, string])[]): ApiObject {
  const src = from as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { apiVersion, kind: "Event", metadata: copyJson(from.metadata) };
  for (const [to, fromField] of pairs) {
    if (src[fromField] !== undefined) out[to] = copyJson(src[fromField]);
  }
  return out as unknown as ApiObject;
}

/** A core v1 event as events/v1 (`group` is the events group: "events.k8s.io"). */
export function coreToEventsV1(ev: ApiObject, group: string): EventV1 {
  const out = mapFields(ev, `${group}/v1`, FIELD_MAP) as EventV1;
  out.regarding ??= {};
  return out;
}

/** An events/v1 event as core v1. */
export function eventsV1ToCore(ev: ApiObject): Event {
  const out = mapFields(ev, "v1", FIELD_MAP.map(([v1, core]) => [core, v1] as const)) as Event;
  out.involvedObject ??= {};
  return out;
}

/** Upstream's checks for a create through events/v1, besides core's (paths name the core fields, as upstream's). */
function validateCreate(ev: EventV1, naming: Naming): FieldError[] {
  const errs = validateEvent(eventsV1ToCore(ev), naming);
  errs.push(...validateSeries(ev));
  if (!ev.eventTime) errs.push(field.required("eventTime", ""));
  if (ev.type !== "Normal" && ev.type !== "Warning") errs.push(field.invalid("type", "", `has invalid value: ${ev.type ?? ""}`));
  if (ev.deprecatedFirstTimestamp) errs.push(field.invalid("firstTimestamp", "", "needs to be unset"));
  if (ev.deprecatedLastTimestamp) errs.push(field.invalid("lastTimestamp", "", "needs to be unset"));
  if (ev.deprecatedCount) errs.push(field.invalid("count", "", "needs to be unset"));
  if (ev.deprecatedSource?.component || ev.deprecatedSource?.host) errs.push(field.invalid("source", "", "needs to be unset"));
  return errs;
}

function validateSeries(ev: EventV1): FieldError[] {
  const errs: FieldError[] = [];
  if (ev.series) {
    if ((ev.series.count ?? 0) < 2) errs.push(field.invalid("series.count", "", "should be at least 2"));
    if (!ev.series.lastObservedTime) errs.push(field.required("series.lastObservedTime", ""));
  }
  return errs;
}

/** The fields an update through events/v1 may not change, [events/v1 field, upstream's path]. */
const IMMUTABLE: readonly (readonly [keyof EventV1, string])[] = [
  ["regarding", "involvedObject"],
  ["reason", "reason"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
  ["type", "type"],
  ["eventTime", "eventTime"],
  ["action", "action"],
  ["related", "related"],
  ["reportingController", "reportingController"],
  ["reportingInstance", "reportingInstance"],
];

function validateUpdate(ev: EventV1, old: EventV1, naming: Naming): FieldError[] {
  const errs = validateEvent(eventsV1ToCore(ev), naming);
  if (JSON.stringify(ev.series ?? null) !== JSON.stringify(old.series ?? null)) errs.push(...validateSeries(ev));
  for (const [name, path] of IMMUTABLE) {
    if (JSON.stringify(ev[name] ?? null) !== JSON.stringify(old[name] ?? null)) errs.push(field.immutable(path, ev[name] ?? null));
  }
  return errs;
}

export function eventsV1Resource(naming: Naming): ResourceDefinition {
  const group = naming.eventsGroup;
  return defineResource<EventV1>({
    group,
    versions: ["v1"],
    resource: "events",
    singular: "event",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"],
    schema: `${EVENTS_V1}.Event`,
    allowCreateOnUpdate: true,
    generation: false,
    storedAs: {
      group: "",
      resource: "events",
      fromStored: (stored) => coreToEventsV1(stored, group),
      toStored: (obj) => eventsV1ToCore(obj),
    },

    validate: (ev) => validateCreate(ev, naming),
    validateUpdate: (ev, old) => validateUpdate(ev, old, naming),

    table: { columns: EVENT_COLUMNS, cells: (ev, now) => eventCells(eventsV1ToCore(ev), now) },
    // Upstream's field label conversion for events/v1.
    fieldSelectors: {
      ...referenceSelectors<EventV1>("regarding", (e) => e.regarding),
      reason: (e) => e.reason ?? "",
      reportingController: (e) => e.reportingController ?? "",
      type: (e) => e.type ?? "",
    },
  });
}
