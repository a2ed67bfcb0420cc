// The audit event (upstream's audit.k8s.io/v1 Event), one JSON line per
// request and stage: the fields and their JSON names are upstream's, empty
// ones left out as upstream's omitempty does.

import type { Level, Stage } from "./policy.js";

export interface EventUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  apiGroup?: string;
  apiVersion?: string;
  subresource?: string;
}

export interface ResponseStatus {
  metadata: Record<string, never>;
  code: number;
  status?: string;
  reason?: string;
  message?: string;
}

export interface AuditEvent {
  kind: "Event";
  apiVersion: string;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: EventUser;
  impersonatedUser?: EventUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** Upstream's MicroTime: RFC 3339 with six fractional digits, UTC (2026-11-27T22:13:24.123456Z). */
export function microTime(): string {
  const ms = performance.timeOrigin + performance.now();
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000));
  return new Date(whole).toISOString().replace(/Z$/, `${String(micros).padStart(3, "0")}Z`);
}

export function eventUser(user: { readonly name: string; readonly uid?: string; readonly groups: readonly string[]; readonly extra?: Readonly<Record<string, readonly string[]>> }): EventUser {
  return {
    username: user.name,
    ...(user.uid !== undefined && user.uid !== "" ? { uid: user.uid } : {}),
    ...(user.groups.length > 0 ? { groups: [...user.groups] } : {}),
    ...(user.extra !== undefined && Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
  };
}

/** The object with metadata.managedFields dropped (and from each item of a list), for omitManagedFields; the input is not changed. */
export function withoutManagedFields(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  let out = o;
  const meta = o.metadata as Record<string, unknown> | undefined;
  if (meta !== null && typeof meta === "object" && "managedFields" in meta) {
    const { managedFields: _m, ...rest } = meta;
    out = { ...out, metadata: rest };
  }
  if (Array.isArray(o.items)) out = { ...out, items: o.items.map(withoutManagedFields) };
  return out;
}
