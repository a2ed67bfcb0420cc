// Paging a list (seed 000, "Chunked lists"): the storage door answers with
// every object under the prefix at one revision; this keeps what matches the
// selectors, cuts at `limit`, and writes the continue token that resumes at
// the next key at the same revision.

import {
  badRequest,
  decodeContinue,
  encodeContinue,
  type ApiObject,
  type ListMeta,
  type ListMode,
} from "../../machinery/index.js";
import type { Cached, ReadAt } from "../../storage/cacher/index.js";
import type { Predicate, PredicateParams } from "./predicate.js";

export interface ListParams extends PredicateParams {
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
}

export interface ListResult {
  items: Cached<ApiObject>[];
  metadata: ListMeta;
}

/**
 * Where a list reads: a continue token resumes at its key, exactly at its
 * version (a token without one, from a "0" list, reads the cache as it stands).
 * `resourcePrefix` is the resource's, `prefix` the one listed (a namespace's).
 */
export function listReadAt(mode: ListMode, resourcePrefix: string, prefix: string): { at: ReadAt; startKey: string } {
  if (mode.mode !== "Continuation") return { at: mode, startKey: prefix };
  const token = decodeContinue(mode.token, resourcePrefix);
  if (!token.key.startsWith(prefix)) throw badRequest("continue key is not valid: it belongs to another namespace");
  const at: ReadAt = token.resourceVersion > 0 ? { mode: "Exact", rv: token.resourceVersion } : { mode: "Any" };
  return { at, startKey: token.key };
}

export interface PageOptions {
  predicate: Predicate;
  /** 0: everything. */
  limit: number;
  /** The first key to consider (inclusive). */
  startKey: string;
  /** The revision the candidates are as of: the list's resourceVersion and the token's. */
  revision: number;
  /** The resource's key prefix (continue tokens are relative to it). */
  resourcePrefix: string;
}

/** One page of `candidates` (in key order). remainingItemCount is only known, and only sent, without selectors. */
export function pageList(candidates: readonly Cached<ApiObject>[], options: PageOptions): ListResult {
  const { predicate, limit, startKey, revision } = options;
  const items: Cached<ApiObject>[] = [];
  let i = 0;
  while (i < candidates.length && candidates[i]!.key < startKey) i++;
  let remaining = 0;
  let more = false;
  for (; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (!predicate.matchesRecord(c)) continue;
    if (limit > 0 && items.length >= limit) {
      more = true;
      if (!predicate.everything) break;
      remaining++;
      continue;
    }
    items.push(c);
  }
  const metadata: ListMeta = { resourceVersion: String(revision) };
  if (more) {
    metadata.continue = encodeContinue(items[items.length - 1]!.key + "\u0000", options.resourcePrefix, revision);
    if (predicate.everything) metadata.remainingItemCount = remaining;
  }
  if (predicate.shard !== undefined) metadata.shardInfo = { selector: predicate.shard.toString() };
  return { items, metadata };
}
