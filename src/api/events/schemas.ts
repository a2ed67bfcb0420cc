// events.<suffix>/v1 Event: the new-style view of core events (the definition
// names keep upstream's `io.k8s.api.events.v1` whatever the group suffix).
// Protobuf field numbers from k8s.io/api/events/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";
import { CORE_V1 } from "../core/schemas.js";

export const EVENTS_V1 = "io.k8s.api.events.v1";

export const EVENTS_TYPES: readonly TypeDef[] = [
  type(`${EVENTS_V1}.Event`, "A report of something that happened to an object (events API).", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    eventTime: f(2, s.microTime(), "When the event was first observed.", { required: true }),
    series: f(3, s.ref(`${EVENTS_V1}.EventSeries`), "The series this event belongs to, for repeated events."),
    reportingController: f(4, s.string(), "The controller that emitted the event."),
    reportingInstance: f(5, s.string(), "The instance of that controller."),
    action: f(6, s.string(), "What was done or failed."),
    reason: f(7, s.string(), "Short, machine-readable reason."),
    regarding: f(8, s.ref(`${CORE_V1}.ObjectReference`), "The object the event is about."),
    related: f(9, s.ref(`${CORE_V1}.ObjectReference`), "A secondary object."),
    note: f(10, s.string(), "Human-readable description."),
    type: f(11, s.string(), "Normal or Warning."),
    deprecatedSource: f(12, s.ref(`${CORE_V1}.EventSource`), "Core events' source (unset on new events)."),
    deprecatedFirstTimestamp: f(13, s.time(), "Core events' firstTimestamp (unset on new events)."),
    deprecatedLastTimestamp: f(14, s.time(), "Core events' lastTimestamp (unset on new events)."),
    deprecatedCount: f(15, s.int32(), "Core events' count (unset on new events)."),
  }),
  type(`${EVENTS_V1}.EventSeries`, "A series of repeated events.", {
    count: f(1, s.int32(), "Occurrences so far.", { required: true }),
    lastObservedTime: f(2, s.microTime(), "Time of the last occurrence.", { required: true }),
  }),
  listOf(EVENTS_V1, "Event", "A list of Events."),
];
