// Resource versions (seed 000, "Resource version format") and the read
// semantics of get, list and watch as pure decisions (seed 000, "Resource
// version semantics"): each request's parameters map to one serving mode, or to
// the 400 its combination earns. The registry and the watch cache act on the result.

import { ApiError, badRequest, causesFromFieldErrors, formatInvalidMessage } from "./errors.js";
import { field } from "./field-errors.js";
import type { FieldError } from "./field-errors.js";
import { buildStatus } from "./status.js";
import { decodeContinueToken } from "./continue-token.js";
import { goQuote } from "./go-format.js";

const CANONICAL = /^[1-9][0-9]*$/;
const DIGITS = /^[0-9]+$/;
const UINT64_MAX = "18446744073709551615";

/** True for a comparable resource version: decimal digits, starting with 1-9. */
export function isValidResourceVersion(rv: string): boolean {
  return CANONICAL.test(rv);
}

function invalidRvDetail(rv: string): string {
  if (!DIGITS.test(rv)) return `strconv.ParseUint: parsing ${goQuote(rv)}: invalid syntax`;
  if (rv.length > 1 && rv[0] === "0") return "must not have leading zeros";
  return `strconv.ParseUint: parsing ${goQuote(rv)}: value out of range`;
}

function invalidResourceVersion(rv: string): ApiError {
  // upstream: "invalid resource version: " + the storage layer's field error.
  return badRequest(`invalid resource version: resourceVersion: Invalid value: ${goQuote(rv)}: ${invalidRvDetail(rv)}`);
}

/**
 * The revision a resource version names. "0" is 0 (the "any version" marker in
 * requests); anything else must be canonical and fit uint64, or it is a 400.
 * Revisions above 2^53 lose precision but keep their order against real ones.
 */
export function parseResourceVersion(rv: string): number {
  if (rv === "0") return 0;
  if (!CANONICAL.test(rv) || rv.length > UINT64_MAX.length || (rv.length === UINT64_MAX.length && rv > UINT64_MAX)) {
    throw invalidResourceVersion(rv);
  }
  return Number(rv);
}

/** A revision as a resource version string. */
export function formatResourceVersion(revision: number): string {
  return String(revision);
}

/**
 * Orders two resource versions: the longer is greater, equal lengths compare
 * lexicographically (seed 000, "Resource version format" 3). Non-canonical
 * versions are not comparable: 400.
 */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 {
  if (!CANONICAL.test(a)) throw invalidResourceVersion(a);
  if (!CANONICAL.test(b)) throw invalidResourceVersion(b);
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How a read is served. */
export type ReadMode =
  /** Consistent: a quorum read (or the cache, once it is proven current). */
  | { mode: "MostRecent" }
  /** Any version, newest preferred; the watch cache as it stands. */
  | { mode: "Any" }
  /** At least `rv`; from the watch cache once it reached `rv` (else 504 after a wait). */
  | { mode: "NotOlderThan"; rv: number }
  /** Exactly `rv`; 410 when it is no longer available. */
  | { mode: "Exact"; rv: number };

/** A list continuing a chunked read. rv < 0 continues at the latest revision. */
export interface Continuation {
  mode: "Continuation";
  token: string;
  rv: number;
  /** Next key, relative to the resource's key prefix. */
  startKey: string;
}

export type ListMode = ReadMode | Continuation;

export interface WatchDecision {
  /** Where the stream starts; for MostRecent/Any the state is read first. */
  start: ReadMode;
  /** Begin with synthetic ADDED events for the objects that exist at the start. */
  sendInitialEvents: boolean;
  /**
   * After the initial events, send a BOOKMARK marking their end: only for
   * streaming lists (sendInitialEvents given explicitly) that allow bookmarks.
   */
  initialEventsEndBookmark: boolean;
  allowBookmarks: boolean;
}

export type ResourceVersionMatch = "Exact" | "NotOlderThan";

export interface GetParams {
  resourceVersion?: string | undefined;
}

export interface ListParams {
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  /** Only valid on watches; a list carrying it is rejected as upstream does. */
  sendInitialEvents?: boolean | undefined;
}

export interface WatchParams {
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
  sendInitialEvents?: boolean | undefined;
  allowWatchBookmarks?: boolean | undefined;
  continue?: string | undefined;
}

export interface DecideOptions {
  /** Group of the ListOptions kind named in messages (upstream: meta.k8s.io). */
  metaGroup?: string;
  /** seed 000, "Versioning": streaming lists are beta, on by default (gate WatchList). */
  watchList?: boolean;
}

/**
 * A rejected parameter combination. The seed gives these 400 (seed 000,
 * "Errors"); the message is upstream's Invalid text for ListOptions.
 */
function invalidOptions(errs: FieldError[], opts: DecideOptions | undefined): ApiError {
  const gk = { group: opts?.metaGroup ?? "meta.k8s.io", kind: "ListOptions" };
  return new ApiError(
    buildStatus({
      code: 400,
      reason: "BadRequest",
      message: formatInvalidMessage(gk, "", errs),
      details: { group: gk.group, kind: gk.kind, causes: causesFromFieldErrors(errs) },
    }),
  );
}

// Empty and absent are the same for resourceVersion on get and list.
function rvMode(rv: string | undefined, other: (n: number) => ReadMode): ReadMode {
  if (rv === undefined || rv === "") return { mode: "MostRecent" };
  if (rv === "0") return { mode: "Any" };
  return other(parseResourceVersion(rv));
}

/** get: unset → MostRecent, "0" → Any, N → NotOlderThan N. */
export function decideGet(params: GetParams): ReadMode {
  return rvMode(params.resourceVersion, (rv) => ({ mode: "NotOlderThan", rv }));
}

/**
 * list, per the seed's table: resourceVersionMatch × paging × resourceVersion.
 * Invalid combinations (a match without rv, Exact with "0", a match or an rv
 * with continue, unknown match values) are 400s.
 */
export function decideList(params: ListParams, opts?: DecideOptions): ListMode {
  const rv = params.resourceVersion ?? "";
  const match = params.resourceVersionMatch ?? "";
  const cont = params.continue ?? "";
  const limited = (params.limit ?? 0) > 0;

  const errs: FieldError[] = [];
  if (match !== "") {
    if (rv === "") errs.push(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"));
    if (cont !== "") errs.push(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
    if (match !== "Exact" && match !== "NotOlderThan") errs.push(field.notSupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]));
    if (match === "Exact" && rv === "0") errs.push(field.forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (params.sendInitialEvents !== undefined) errs.push(field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  if (errs.length > 0) throw invalidOptions(errs, opts);

  if (rv !== "" && rv !== "0") parseResourceVersion(rv); // malformed versions are a 400 first

  if (cont !== "") {
    const token = decodeContinueToken(cont);
    if (rv !== "" && rv !== "0") throw badRequest("specifying resource version is not allowed when using continue");
    return { mode: "Continuation", token: cont, rv: token.resourceVersion, startKey: token.startKey };
  }
  if (match === "Exact") return { mode: "Exact", rv: parseResourceVersion(rv) };
  if (match === "NotOlderThan") return rvMode(rv, (n) => ({ mode: "NotOlderThan", rv: n }));
  // No match: a limited list at a given version is served exactly (legacy paging semantics).
  return rvMode(rv, (n) => (limited ? { mode: "Exact", rv: n } : { mode: "NotOlderThan", rv: n }));
}

/**
 * watch: unset → state at MostRecent then changes; "0" → state at Any then
 * changes; N → changes after N. With sendInitialEvents (streaming lists,
 * requires resourceVersionMatch=NotOlderThan) N means "synced at least to N".
 */
export function decideWatch(params: WatchParams, opts?: DecideOptions): WatchDecision {
  const rv = params.resourceVersion ?? "";
  const match = params.resourceVersionMatch ?? "";
  const send = params.sendInitialEvents;
  const cont = params.continue ?? "";
  const allowBookmarks = params.allowWatchBookmarks === true;

  const errs: FieldError[] = [];
  if (send !== undefined) {
    if (match !== "NotOlderThan") {
      errs.push(field.forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (opts?.watchList === false) {
      errs.push(field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"));
    }
  }
  if (match !== "") {
    if (send === undefined) errs.push(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"));
    if (match !== "NotOlderThan") errs.push(field.notSupported("resourceVersionMatch", match, ["NotOlderThan"]));
    if (cont !== "") errs.push(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
  }
  if (errs.length > 0) throw invalidOptions(errs, opts);

  if (send === undefined) {
    // Legacy watch (the seed's watch table).
    if (rv === "") return { start: { mode: "MostRecent" }, sendInitialEvents: true, initialEventsEndBookmark: false, allowBookmarks };
    if (rv === "0") return { start: { mode: "Any" }, sendInitialEvents: true, initialEventsEndBookmark: false, allowBookmarks };
    return { start: { mode: "Exact", rv: parseResourceVersion(rv) }, sendInitialEvents: false, initialEventsEndBookmark: false, allowBookmarks };
  }
  // Streaming list, or an explicit opt-out of initial events.
  const start: ReadMode =
    rv === ""
      ? { mode: "MostRecent" }
      : rv === "0"
        ? { mode: "Any" }
        : send
          ? { mode: "NotOlderThan", rv: parseResourceVersion(rv) }
          : { mode: "Exact", rv: parseResourceVersion(rv) };
  return { start, sendInitialEvents: send, initialEventsEndBookmark: send && allowBookmarks, allowBookmarks };
}
