// ControllerRevisions for DaemonSets and StatefulSets (upstream's
// controller/history): each distinct pod template is stored once as an
// owned revision named <owner>-<hash> with an increasing revision number;
// re-applying an old template moves its revision to the top instead of
// copying it; history beyond revisionHistoryLimit is deleted oldest first.

import { isApiError, type ApiObject, type LabelSelector } from "../../machinery/index.js";
import type { ControllerRevision } from "../../api/apps/types.js";
import type { ResourceRef, RestClient } from "../../client/index.js";
import { claimObjects } from "./claim.js";
import { computeHash, semanticEqual } from "./hash.js";
import { controllerRef, selectorOf } from "./resources.js";
import { writeStatus } from "./status.js";
import { CONTROLLERREVISIONS } from "../../api/resource-refs.js";
import { CORE_V1, registerCoreSchemas, registerPersistentVolumeSchemas } from "../../api/core/index.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { goTypedValue } from "../../machinery/go-typed-json.js";

export type { ControllerRevision };

let templateSchemas: SchemaRegistry | undefined;

/**
 * What a revision stores: a patch that replaces the owner's template, as
 * upstream's getPatch writes it — the template as Go's typed encoding has it
 * (`creationTimestamp: null`, `resources: {}`, zero values dropped), keys
 * sorted — because clients compare it byte for byte with their own getPatch
 * (kubectl rollout, conformance's daemon.Match).
 */
export function revisionData(template: unknown): unknown {
  if (templateSchemas === undefined) {
    templateSchemas = new SchemaRegistry();
    registerCoreSchemas(templateSchemas);
    registerPersistentVolumeSchemas(templateSchemas);
  }
  return { spec: { template: { $patch: "replace", ...goTypedValue(template, `${CORE_V1}.PodTemplateSpec`, templateSchemas) } } };
}

/** The template a revision's data holds. */
export function templateOf(revision: ControllerRevision): unknown {
  const t = { ...((revision.data as { spec?: { template?: object } } | undefined)?.spec?.template ?? {}) } as Record<string, unknown>;
  delete t["$patch"];
  return t;
}

export function sortByRevision(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0) || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

export interface SyncRevisionOptions {
  client: RestClient;
  owner: ApiObject;
  /** The owner's revisions, claimed. */
  revisions: readonly ControllerRevision[];
  data: unknown;
  templateLabels: Record<string, string> | undefined;
  collisionCount: number;
  /** The label the hash goes in (controller.orch.io/hash for StatefulSets, controller-revision-hash for DaemonSets). */
  hashLabel: string;
}

export class RevisionCollision extends Error {
  constructor(readonly collisionCount: number) {
    super(`hash collision creating a ControllerRevision; collisionCount is now ${collisionCount}`);
  }
}

/**
 * The revision for `data`: an equal one (renumbered to the newest if it is
 * not), else a new one. A name taken by a different revision raises
 * RevisionCollision with the next collision count, for the caller to record
 * in its status and retry.
 */
export async function syncRevision(o: SyncRevisionOptions): Promise<ControllerRevision> {
  const sorted = sortByRevision(o.revisions);
  const max = sorted.length > 0 ? sorted[sorted.length - 1]!.revision ?? 0 : 0;
  const equal = sorted.filter((r) => semanticEqual(r.data, o.data));
  const latestEqual = equal[equal.length - 1];
  if (latestEqual !== undefined) {
    if (latestEqual === sorted[sorted.length - 1]) return latestEqual;
    return o.client.update<ControllerRevision>(CONTROLLERREVISIONS, { ...structuredClone(latestEqual), revision: max + 1 });
  }
  const hash = computeHash(o.data, o.collisionCount);
  const name = `${o.owner.metadata.name!.slice(0, 223)}-${hash}`;
  const revision: ControllerRevision = {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: { name, namespace: o.owner.metadata.namespace!, labels: { ...(o.templateLabels ?? {}), [o.hashLabel]: hash }, ownerReferences: [controllerRef(o.owner, "apps/v1")] },
    data: o.data,
    revision: max + 1,
  };
  try {
    return await o.client.create<ControllerRevision>(CONTROLLERREVISIONS, revision);
  } catch (err) {
    if (!isApiError(err, "AlreadyExists")) throw err;
    const existing = await o.client.get<ControllerRevision>(CONTROLLERREVISIONS, { namespace: revision.metadata.namespace!, name });
    const ours = (existing.metadata.ownerReferences ?? []).some((r) => r.uid === o.owner.metadata.uid && r.controller);
    if (ours && semanticEqual(existing.data, o.data)) return existing;
    throw new RevisionCollision(o.collisionCount + 1);
  }
}

export interface OwnerRevisionsOptions {
  client: RestClient;
  owner: ApiObject & { spec?: { selector?: LabelSelector | null; template?: { metadata?: { labels?: Record<string, string> } } }; status?: { collisionCount?: number } };
  ownerResource: ResourceRef;
  /** Revisions in the owner's namespace (from an informer cache). */
  candidates: readonly ControllerRevision[];
  hashLabel: string;
}

/**
 * The owner's revisions (claimed by its selector) and the one for its
 * current template (made if missing). On a hash collision the owner's
 * status.collisionCount is raised before the error is thrown, so the retry
 * hashes differently.
 */
export async function ownerRevisions(o: OwnerRevisionsOptions): Promise<{ revisions: ControllerRevision[]; update: ControllerRevision }> {
  const { client, owner } = o;
  const revisions = await claimObjects({ client, resource: CONTROLLERREVISIONS, owner, ownerResource: o.ownerResource, selector: selectorOf(owner), candidates: o.candidates });
  try {
    const update = await syncRevision({
      client,
      owner,
      revisions,
      data: revisionData(owner.spec?.template),
      templateLabels: owner.spec?.template?.metadata?.labels,
      collisionCount: owner.status?.collisionCount ?? 0,
      hashLabel: o.hashLabel,
    });
    return { revisions: [...revisions.filter((r) => r.metadata.name !== update.metadata.name), update], update };
  } catch (err) {
    if (err instanceof RevisionCollision) await writeStatus(client, o.ownerResource, owner, { ...owner.status, collisionCount: err.collisionCount });
    throw err;
  }
}

/** Deletes the oldest revisions not in `live` until at most `limit` non-live ones remain. */
export async function truncateHistory(client: RestClient, revisions: readonly ControllerRevision[], live: ReadonlySet<string>, limit: number): Promise<void> {
  const historic = sortByRevision(revisions).filter((r) => !live.has(r.metadata.name!));
  const excess = historic.length - limit;
  for (const r of historic.slice(0, Math.max(0, excess))) {
    try {
      await client.delete(CONTROLLERREVISIONS, { namespace: r.metadata.namespace!, name: r.metadata.name! });
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
    }
  }
}
