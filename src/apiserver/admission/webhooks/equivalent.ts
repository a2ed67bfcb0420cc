// matchPolicy Equivalent (the default): a webhook whose rules name another
// version of the same resource, or the same resource under another group
// name over one storage (an alias group), is still called. It sees the
// request as it asked to: the object converted to the matched version, the
// review's `kind`/`resource` the matched ones, `requestKind`/
// `requestResource` the request's own. A mutation comes back converted to
// the request's version. (Upstream: admission/plugin/webhook, "matchPolicy".)

import type { ResourceDefinition } from "../../../api/resource.js";
import type { ApiObject, GroupResource } from "../../../machinery/index.js";

/** One group/version/resource serving a storage, with its kind. */
export interface ServedAs {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
}

export interface Equivalence {
  /** Every group/version/resource over the storage of `gr` (its own versions included), in serving order. */
  equivalents(gr: GroupResource): ServedAs[];
  /** `obj` (of `from`, in its apiVersion) as `to` sees it; a new object. */
  convert(obj: ApiObject, from: GroupResource, to: ServedAs): Promise<ApiObject>;
}

const storageOf = (def: ResourceDefinition) => (def.storedAs ? `${def.storedAs.group}/${def.storedAs.resource}` : `${def.group}/${def.resource}`);

/** Equivalence over the served declarations (`definitions` is read on every call: kinds come and go). */
export function equivalence(definitions: () => Iterable<ResourceDefinition>): Equivalence {
  const find = (gr: GroupResource) => [...definitions()].find((d) => d.group === gr.group && d.resource === gr.resource);
  return {
    equivalents(gr) {
      const def = find(gr);
      if (def === undefined) return [];
      const storage = storageOf(def);
      return [...definitions()]
        .filter((d) => storageOf(d) === storage)
        .flatMap((d) => d.versions.map((version) => ({ group: d.group, version, resource: d.resource, kind: d.kind })));
    },
    async convert(obj, from, to) {
      const source = find(from);
      const target = find(to);
      if (source === undefined || target === undefined) throw new Error(`no conversion from ${from.resource}.${from.group} to ${to.resource}.${to.group}`);
      let out = structuredClone(obj);
      if (source !== target) {
        // Through the one storage: the source's stored form, read back as the target.
        const stored = source.storedAs ? source.storedAs.toStored(out) : out;
        out = target.storedAs ? target.storedAs.fromStored(stored) : structuredClone(stored);
      }
      const apiVersion = to.group === "" ? to.version : `${to.group}/${to.version}`;
      if (target.conversion !== undefined) [out] = await target.conversion.convert([out], to.version);
      out!.apiVersion = apiVersion;
      return out!;
    },
  };
}
