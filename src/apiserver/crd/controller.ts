// The API server's own CustomResourceDefinition loop (upstream's naming,
// establishing and finalizer controllers in one): every change of a
// definition is reconciled here, one name at a time.
//   - names: the requested names are accepted unless another definition of
//     the group (or a built-in resource) already uses them (NamesAccepted,
//     with upstream's reasons and messages); accepted names are kept.
//   - serving: an Established definition's kind is added to the registry,
//     the stores (the one storage door), discovery and OpenAPI at once.
//   - deleting: the first delete holds the definition with the cleanup
//     finalizer (api/apiextensions/crds.ts); here every object of the kind is
//     deleted (creates are refused meanwhile), then the finalizer is removed
//     and the kind unserved.
// At start every definition is reconciled before the server reports ready.

import { customResource, customResourceTypes, cleanupFinalizer, conditionOf, setCondition, type CustomResourceDefinition, type CustomResourceDefinitionNames } from "../../api/apiextensions/index.js";
import { findSubresource, schemaOf } from "../../api/resource.js";
import { isApiError, type ApiObject, type GroupResource } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { ApiRegistry } from "../api-registry.js";
import type { RegistryStore } from "../registry/store.js";
import type { Stores } from "../storage-factory.js";
import type { ServiceResolver } from "../admission/webhooks/call.js";
import { webhookConverter } from "./conversion.js";

export interface ServedApiDocuments {
  /** Discovery and OpenAPI answers are rebuilt on the next request. */
  invalidate(): void;
}

export interface CrdControllerOptions {
  readonly crds: RegistryStore;
  readonly registry: ApiRegistry;
  readonly stores: Stores;
  /** Discovery and OpenAPI. */
  readonly documents: readonly ServedApiDocuments[];
  readonly naming: Naming;
  readonly log: (line: string) => void;
  /** Where a conversion webhook's Service leads (its endpoints); without it only URL webhooks are reachable. */
  readonly resolveService?: ServiceResolver;
  /** How soon a definition whose objects are still finalizing is looked at again (default 1 s). */
  readonly retryMs?: number;
}

export class CrdController {
  readonly #o: CrdControllerOptions;
  readonly #queue = new Set<string>();
  /** Definition name → the resource it serves. */
  readonly #served = new Map<string, GroupResource & { schemas: readonly string[] }>();
  readonly #terminating = new Set<string>();
  #draining: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;
  #stopped = false;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(options: CrdControllerOptions) {
    this.#o = options;
  }

  /** Reconcile every stored definition (their kinds are served when this resolves), then follow changes. */
  async start(): Promise<void> {
    this.#unsubscribe = this.#o.crds.cacher.subscribe((e) => this.#enqueue(nameOfKey(e.key)));
    const listed = await this.#o.crds.list(undefined, {});
    for (const item of listed.items) this.#queue.add(item.object.metadata.name!);
    await this.#drain();
  }

  stop(): void {
    this.#stopped = true;
    this.#unsubscribe?.();
    for (const t of this.#timers) clearTimeout(t);
  }

  /** Wait until nothing is queued (tests). */
  async idle(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  #enqueue(name: string | undefined): void {
    if (name === undefined || this.#stopped) return;
    this.#queue.add(name);
    void this.#drain();
  }

  #drain(): Promise<void> {
    if (this.#draining !== undefined) return this.#draining;
    const run = async () => {
      await Promise.resolve(); // #draining is set before the loop can end
      try {
        while (this.#queue.size > 0 && !this.#stopped) {
          const name = this.#queue.values().next().value as string;
          this.#queue.delete(name);
          try {
            await this.#sync(name);
          } catch (err) {
            this.#o.log(`customresourcedefinition ${name}: ${err instanceof Error ? err.message : String(err)}; retrying`);
            this.#later(name);
          }
        }
      } finally {
        this.#draining = undefined;
      }
    };
    this.#draining = run();
    return this.#draining;
  }

  #later(name: string): void {
    if (this.#stopped) return;
    const t = setTimeout(() => {
      this.#timers.delete(t);
      this.#enqueue(name);
    }, this.#o.retryMs ?? 1000);
    t.unref?.();
    this.#timers.add(t);
  }

  async #sync(name: string): Promise<void> {
    let crd: CustomResourceDefinition;
    try {
      crd = (await this.#o.crds.get(undefined, name)).object as CustomResourceDefinition;
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
      this.#terminating.delete(name);
      this.#unserve(name);
      return;
    }
    if (crd.metadata.deletionTimestamp) return this.#finalize(crd);
    this.#terminating.delete(name);
    const next = await this.#names(crd);
    if (next !== undefined) crd = next;
    if (conditionOf(crd, "Established")?.status === "True") await this.#serve(crd);
  }

  /** NamesAccepted, acceptedNames and Established as upstream's naming controller computes them; written when they change. */
  async #names(crd: CustomResourceDefinition): Promise<CustomResourceDefinition | undefined> {
    const group = crd.spec?.group ?? "";
    const usedResources = new Set<string>();
    const usedKinds = new Set<string>();
    for (const item of (await this.#o.crds.list(undefined, {})).items) {
      const other = item.object as CustomResourceDefinition;
      if (other.metadata.name === crd.metadata.name || other.spec?.group !== group) continue;
      const n = other.status?.acceptedNames ?? {};
      for (const r of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (r) usedResources.add(r);
      for (const k of [n.kind, n.listKind]) if (k) usedKinds.add(k);
    }
    // A built-in resource of the same group keeps its names.
    for (const def of this.#o.registry.resources) {
      if (def.group !== group || def.pruneUnknown !== undefined) continue;
      for (const r of [def.resource, def.singular, ...(def.shortNames ?? [])]) usedResources.add(r);
      usedKinds.add(def.kind).add(`${def.kind}List`);
    }
    const requested = crd.spec?.names ?? {};
    const accepted = crd.status?.acceptedNames ?? {};
    const names: CustomResourceDefinitionNames = structuredClone(accepted);
    let reason: string | undefined;
    let message = "";
    const fresh = (want: string | undefined, have: string | undefined, used: Set<string>) => (want === have || want === undefined || !used.has(want) ? undefined : `"${want}" is already in use`);
    const check = (key: "plural" | "singular" | "kind" | "listKind", used: Set<string>, why: string) => {
      const err = fresh(requested[key], accepted[key], used);
      if (err === undefined) {
        if (requested[key] !== undefined) names[key] = requested[key];
      } else {
        reason = why;
        message = err;
      }
    };
    check("plural", usedResources, "PluralConflict");
    check("singular", usedResources, "SingularConflict");
    if (JSON.stringify(requested.shortNames ?? []) !== JSON.stringify(accepted.shortNames ?? [])) {
      const errs = (requested.shortNames ?? []).filter((s) => !(accepted.shortNames ?? []).includes(s)).map((s) => fresh(s, "", usedResources)).filter((e) => e !== undefined);
      if (errs.length > 0) {
        reason = "ShortNamesConflict";
        message = errs.length === 1 ? errs[0]! : `[${errs.join(", ")}]`;
      } else if (requested.shortNames !== undefined) names.shortNames = requested.shortNames;
      else delete names.shortNames;
    }
    check("kind", usedKinds, "KindConflict");
    check("listKind", usedKinds, "ListKindConflict");
    if (requested.categories !== undefined) names.categories = requested.categories;
    else delete names.categories;

    // Only the names and these two conditions are this step's: applied to the object as stored (the cache may lag).
    const update = (target: CustomResourceDefinition, now: Date) => {
      (target.status ??= {}).acceptedNames = names;
      setCondition(target, reason === undefined ? { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found" } : { type: "NamesAccepted", status: "False", reason, message }, now);
      if (conditionOf(target, "Established")?.status !== "True") {
        setCondition(target, reason === undefined
          ? { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "the initial names have been accepted" }
          : { type: "Established", status: "False", reason: "NotAccepted", message: "not all names are accepted" }, now);
      }
    };
    const next = structuredClone(crd);
    update(next, new Date());
    if (JSON.stringify(next.status) === JSON.stringify(crd.status)) return undefined;
    return this.#writeStatus(crd.metadata.name!, (current) => {
      update(current, new Date());
      return current;
    });
  }

  async #writeStatus(name: string, mutate: (crd: CustomResourceDefinition) => CustomResourceDefinition): Promise<CustomResourceDefinition> {
    const status = findSubresource(this.#o.crds.def, "status");
    const out = await this.#o.crds.modify(undefined, name, (current) => mutate(current as CustomResourceDefinition) as ApiObject, status !== undefined ? { subresource: status } : {});
    return out.object as CustomResourceDefinition;
  }

  async #serve(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata.name!;
    const resolve: ServiceResolver = this.#o.resolveService ?? (async (ns, svc) => {
      throw new Error(`service "${ns}/${svc}" cannot be resolved: services are not served`);
    });
    const def = customResource(crd, { terminating: () => this.#terminating.has(name), webhookConvert: webhookConverter(crd, resolve) });
    const before = this.#served.get(name);
    if (def === undefined) {
      this.#unserve(name);
      return;
    }
    if (before !== undefined && (before.group !== def.group || before.resource !== def.resource)) this.#unserve(name);
    else if (before !== undefined) for (const name of before.schemas) this.#o.registry.schemas.replace(name, []);
    // A built-in resource of the same name stays (upstream serves the built-in too).
    const existing = this.#o.registry.find(def.group, def.resource);
    if (existing !== undefined && existing.pruneUnknown === undefined) return;
    // Each served version's own types (managed fields and apply walk the request's version by its schema).
    const schemas = [...new Set([def.storageVersion ?? def.versions[0]!, ...def.versions])].map((v) => {
      const name = schemaOf(def, v);
      this.#o.registry.schemas.replace(name, customResourceTypes(def, crd, v));
      return name;
    });
    this.#o.registry.add(def);
    await this.#o.stores.add(def);
    this.#served.set(name, { group: def.group, resource: def.resource, schemas });
    for (const d of this.#o.documents) d.invalidate();
  }

  #unserve(name: string): void {
    const gr = this.#served.get(name);
    if (gr === undefined) return;
    this.#served.delete(name);
    this.#o.registry.remove(gr);
    this.#o.stores.remove(gr);
    for (const schema of gr.schemas) this.#o.registry.schemas.replace(schema, []);
    for (const d of this.#o.documents) d.invalidate();
  }

  /** A terminating definition: delete every object of its kind, then let the definition go. */
  async #finalize(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata.name!;
    const finalizer = cleanupFinalizer(this.#o.naming);
    if (!(crd.metadata.finalizers ?? []).includes(finalizer)) return;
    this.#terminating.add(name);
    const gr = this.#served.get(name);
    const store = gr === undefined ? undefined : this.#o.stores.for(gr);
    if (store === undefined) {
      await this.#setTerminating(name, "NeverEstablished", "resource was never established", "False");
    } else {
      await this.#setTerminating(name, "InstanceDeletionInProgress", "CustomResource deletion is in progress", "True");
      const listed = await store.list(undefined, {});
      for (const item of listed.items) {
        const meta = item.object.metadata;
        try {
          await store.delete(meta.namespace, meta.name!, {});
        } catch (err) {
          if (!isApiError(err, "NotFound")) throw err;
        }
      }
      const left = (await store.list(undefined, {})).items.length;
      if (left > 0) {
        await this.#setTerminating(name, "InstanceDeletionCheck", `could not confirm zero CustomResources remaining: ${left} remaining`, "True");
        this.#later(name);
        return;
      }
      await this.#setTerminating(name, "InstanceDeletionCompleted", "removed all instances", "False");
    }
    await this.#o.crds.modify(undefined, name, (current) => {
      current.metadata.finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      return current;
    });
    this.#unserve(name);
  }

  async #setTerminating(name: string, reason: string, message: string, status: "True" | "False"): Promise<void> {
    await this.#writeStatus(name, (current) => {
      setCondition(current, { type: "Terminating", status, reason, message }, new Date());
      return current;
    });
  }
}

function nameOfKey(key: string): string | undefined {
  const i = key.lastIndexOf("/");
  return i < 0 ? undefined : key.slice(i + 1);
}
