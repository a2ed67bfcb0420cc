// Adoption and release (upstream's ControllerRefManager): a controller owns
// the objects whose controller reference names it and that its selector
// matches; it adopts matching orphans (after checking afresh that it is
// itself alive) and lets go of owned objects its selector no longer matches.
// Writes are merge patches guarded by the object's resourceVersion.

import { isApiError, type ApiObject, type Selector } from "../../machinery/index.js";
import type { ResourceRef, RestClient } from "../../client/index.js";
import { controllerOf, controllerRef } from "./resources.js";

export interface ClaimOptions<T extends ApiObject> {
  client: RestClient;
  /** The dependents' resource. */
  resource: ResourceRef;
  owner: ApiObject;
  /** The owner's resource, to read it afresh before adopting. */
  ownerResource: ResourceRef;
  selector: Selector;
  /** Objects in the owner's namespace (from an informer cache; not modified). */
  candidates: readonly T[];
}

/** The candidates the owner now controls. Adopts and releases as needed; throws the first write failure after trying them all. */
export async function claimObjects<T extends ApiObject>(options: ClaimOptions<T>): Promise<T[]> {
  const { client, resource, owner, selector } = options;
  const ownerUid = owner.metadata.uid;
  const claimed: T[] = [];
  const errors: unknown[] = [];
  let canAdopt: Promise<boolean> | undefined;
  for (const obj of options.candidates) {
    const ref = controllerOf(obj);
    const labels = obj.metadata.labels ?? {};
    if (ref !== undefined) {
      if (ref.uid !== ownerUid) continue;
      if (selector.matches(labels)) {
        claimed.push(obj);
        continue;
      }
      if (owner.metadata.deletionTimestamp) continue; // a dying owner releases nothing
      const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
      await patchOwners(client, resource, obj, refs).catch((err: unknown) => errors.push(err));
      continue;
    }
    if (owner.metadata.deletionTimestamp || obj.metadata.deletionTimestamp || !selector.matches(labels)) continue;
    canAdopt ??= ownerStillCurrent(client, options.ownerResource, owner);
    if (!(await canAdopt)) continue;
    try {
      const adopted = await patchOwners(client, resource, obj, [...(obj.metadata.ownerReferences ?? []), controllerRef(owner, "apps/v1")]);
      if (adopted !== undefined) claimed.push(adopted as T);
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
  return claimed;
}

async function patchOwners(client: RestClient, resource: ResourceRef, obj: ApiObject, ownerReferences: ApiObject["metadata"]["ownerReferences"]): Promise<ApiObject | undefined> {
  try {
    return await client.patch(resource, {
      namespace: obj.metadata.namespace!,
      name: obj.metadata.name!,
      patch: { metadata: { ownerReferences: ownerReferences ?? [], resourceVersion: obj.metadata.resourceVersion, uid: obj.metadata.uid } },
    });
  } catch (err) {
    if (isApiError(err, "NotFound")) return undefined; // gone: nothing to claim
    throw err;
  }
}

/** upstream's RecheckDeletionTimestamp: the owner, read from the server, is the same object and not being deleted. */
async function ownerStillCurrent(client: RestClient, resource: ResourceRef, owner: ApiObject): Promise<boolean> {
  try {
    const fresh = await client.get(resource, { namespace: owner.metadata.namespace!, name: owner.metadata.name! });
    return fresh.metadata.uid === owner.metadata.uid && !fresh.metadata.deletionTimestamp;
  } catch (err) {
    if (isApiError(err, "NotFound")) return false;
    throw err;
  }
}
