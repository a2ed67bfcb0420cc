// PodLogOptions (core/v1) as query parameters: what `GET pods/NAME/log` takes
// and what the API server passes on to the node agent's /containerLogs. One
// decoder and one validator for both ends, with upstream's messages (query
// decoding errors are 400s, ValidatePodLogOptions failures 422s).

import { field, type FieldError } from "../../machinery/field-errors.js";
import { goQuote } from "../../machinery/go-format.js";

export interface PodLogOptions {
  container?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  sinceSeconds?: number;
  /** Milliseconds since the epoch (the parameter is RFC 3339, seconds precision). */
  sinceTime?: number;
  tailLines?: number;
  limitBytes?: number;
  insecureSkipTLSVerifyBackend: boolean;
}

/** A parameter that does not decode; the API server answers 400 with `message`. */
export class LogOptionsError extends Error {}

// Upstream's conversion from a query value to a bool: absent, "0", "false" and "f" are false, anything else true.
function bool(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null) return false;
  const l = v.toLowerCase();
  return !(v === "0" || l === "false" || l === "f");
}

function int(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  // strconv.ParseInt's grammar: optional sign, decimal digits, within int64.
  if (!/^[+-]?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new LogOptionsError(`strconv.ParseInt: parsing ${goQuote(v)}: ${/^[+-]?\d+$/.test(v) ? "value out of range" : "invalid syntax"}`);
  }
  return Number(v);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function time(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === "") return undefined;
  const ms = RFC3339.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new LogOptionsError(`parsing time ${goQuote(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${goQuote(v)} as RFC 3339`);
  return ms;
}

/** Decodes the parameters (throws LogOptionsError). `tail` is the agent's legacy spelling of tailLines ("all": no limit). */
export function parsePodLogOptions(query: URLSearchParams): PodLogOptions {
  const q = new URLSearchParams(query);
  const tail = q.get("tail");
  if (tail !== null && tail !== "") {
    if (tail === "all") q.delete("tailLines");
    else q.set("tailLines", tail);
  }
  const container = q.get("container") ?? "";
  const opts: PodLogOptions = {
    follow: bool(q, "follow"),
    previous: bool(q, "previous"),
    timestamps: bool(q, "timestamps"),
    insecureSkipTLSVerifyBackend: bool(q, "insecureSkipTLSVerifyBackend"),
  };
  if (container !== "") opts.container = container;
  const sinceSeconds = int(q, "sinceSeconds");
  if (sinceSeconds !== undefined) opts.sinceSeconds = sinceSeconds;
  const sinceTime = time(q, "sinceTime");
  if (sinceTime !== undefined) opts.sinceTime = sinceTime;
  const tailLines = int(q, "tailLines");
  if (tailLines !== undefined) opts.tailLines = tailLines;
  const limitBytes = int(q, "limitBytes");
  if (limitBytes !== undefined) opts.limitBytes = limitBytes;
  return opts;
}

/** Upstream's ValidatePodLogOptions. */
export function validatePodLogOptions(opts: PodLogOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (opts.tailLines !== undefined && opts.tailLines < 0) errs.push(field.invalid("tailLines", opts.tailLines, "must be greater than or equal to 0"));
  if (opts.limitBytes !== undefined && opts.limitBytes < 1) errs.push(field.invalid("limitBytes", opts.limitBytes, "must be greater than 0"));
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined) {
    errs.push(field.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"));
  } else if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1) {
    errs.push(field.invalid("sinceSeconds", opts.sinceSeconds, "must be greater than 0"));
  }
  return errs;
}

/** The agent's query for these options (container and insecureSkipTLSVerifyBackend travel elsewhere), as upstream's LogLocation builds it. */
export function podLogQuery(opts: PodLogOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (opts.follow) q.set("follow", "true");
  if (opts.previous) q.set("previous", "true");
  if (opts.timestamps) q.set("timestamps", "true");
  if (opts.sinceSeconds !== undefined) q.set("sinceSeconds", String(opts.sinceSeconds));
  if (opts.sinceTime !== undefined) q.set("sinceTime", new Date(opts.sinceTime).toISOString().replace(/\.\d{3}Z$/, "Z"));
  if (opts.tailLines !== undefined) q.set("tailLines", String(opts.tailLines));
  if (opts.limitBytes !== undefined) q.set("limitBytes", String(opts.limitBytes));
  return q;
}
