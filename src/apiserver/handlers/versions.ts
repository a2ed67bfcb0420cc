// What a request reads, in the version it asked for: objects of a kind with
// a conversion (custom resources) are stored in one version and converted on
// the way out (None: apiVersion only; Webhook: a ConversionReview), with the
// asked version's defaults applied, for gets, lists, watches and what writes
// return. Conversions that need no webhook are memoized per stored revision,
// so the watch cache's records keep serving their serialized bytes.

import type { Conversion, ResourceDefinition } from "../../api/resource.js";
import type { ApiObject } from "../../machinery/index.js";
import { cachedRecord, type Cached } from "../../storage/cacher/index.js";

/** Per conversion (a changed definition brings a new one: new defaults), per stored record, per version. */
const memos = new WeakMap<Conversion, WeakMap<Cached<ApiObject>, Map<string, Cached<ApiObject>>>>();

/** `items` in `version` (same order); records that need nothing come back as they were. */
export async function inVersion(def: ResourceDefinition, version: string, items: readonly Cached<ApiObject>[]): Promise<Cached<ApiObject>[]> {
  const conversion = def.conversion;
  if (conversion === undefined || items.length === 0) return [...items];
  const out = [...items];
  const todo: number[] = [];
  let memo = memos.get(conversion);
  if (memo === undefined) memos.set(conversion, (memo = new WeakMap()));
  items.forEach((c, i) => {
    const known = conversion.stable ? memo.get(c)?.get(version) : undefined;
    if (known !== undefined) out[i] = known;
    else todo.push(i);
  });
  if (todo.length === 0) return out;
  const converted = await conversion.convert(todo.map((i) => items[i]!.object), version);
  todo.forEach((i, n) => {
    const original = items[i]!;
    const object = converted[n]!;
    const record = object === original.object ? original : cachedRecord({ key: original.key, object, revision: original.revision });
    if (conversion.stable && original.revision > 0) {
      let byVersion = memo.get(original);
      if (byVersion === undefined) memo.set(original, (byVersion = new Map()));
      byVersion.set(version, record);
    }
    out[i] = record;
  });
  return out;
}

/** One record in `version`. */
export async function oneInVersion(def: ResourceDefinition, version: string, item: Cached<ApiObject>): Promise<Cached<ApiObject>> {
  if (def.conversion === undefined) return item;
  return (await inVersion(def, version, [item]))[0]!;
}
