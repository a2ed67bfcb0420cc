// The storage admission plugins, as upstream's of the same names:
// - DefaultStorageClass: a claim created without spec.storageClassName gets
//   the default class (annotation `storageclass.<domain>/is-default-class:
//   "true"`; the newest one when several are marked, as upstream since 1.26).
// - PersistentVolumeClaimResize: a claim may grow only when bound and when its
//   class allows expansion.
// - StorageObjectInUseProtection: new claims and volumes get the
//   `<domain>/pvc-protection` / `<domain>/pv-protection` finalizer, which the
//   protection controllers remove once the claim is unused / the volume unbound.
// They read StorageClasses through a lookup the server passes in.

import { claimRequest, type PersistentVolumeClaim } from "../../api/core/index.js";
import type { StorageClass } from "../../api/storage/index.js";
import type { MutatingPlugin, ValidatingPlugin } from "../../api/admission.js";
import { forbidden, isApiError, type ApiObject } from "../../machinery/index.js";
import { storageKeys, type Naming } from "../../machinery/naming.js";
import { newestMarked } from "./default-class.js";

/** What the plugins need of the StorageClass store (the registry's store is one). */
export interface StorageClassLookup {
  get(namespace: undefined, name: string): Promise<{ readonly object: ApiObject }>;
  list(namespace: undefined, params: {}): Promise<{ readonly items: readonly { readonly object: ApiObject }[] }>;
}

const PVCS = { group: "", resource: "persistentvolumeclaims" };
const isClaim = (r: { group: string; resource: string }) => r.group === "" && r.resource === "persistentvolumeclaims";

/** The default class by upstream's rule: of those marked, the newest (then the first by name). */
export function defaultClass(classes: readonly StorageClass[], naming: Naming): StorageClass | undefined {
  return newestMarked(classes, storageKeys(naming).defaultClass);
}

export function defaultStorageClass(naming: Naming, classes: () => StorageClassLookup | undefined): MutatingPlugin {
  return {
    name: "DefaultStorageClass",
    handles: (a) => a.operation === "CREATE" && isClaim(a.resource) && a.subresource === undefined,
    async admit(a) {
      const pvc = a.object as PersistentVolumeClaim;
      // An explicit class, even "" (no class), is kept.
      if (pvc.spec?.storageClassName != null) return;
      const store = classes();
      if (store === undefined) return;
      const def = defaultClass((await store.list(undefined, {})).items.map((i) => i.object as StorageClass), naming);
      if (def !== undefined) (pvc.spec ??= {}).storageClassName = def.metadata.name!;
    },
  };
}

export function persistentVolumeClaimResize(classes: () => StorageClassLookup | undefined): ValidatingPlugin {
  return {
    name: "PersistentVolumeClaimResize",
    handles: (a) => a.operation === "UPDATE" && isClaim(a.resource) && a.subresource === undefined,
    async validate(a) {
      const pvc = a.object as PersistentVolumeClaim;
      const old = a.oldObject as PersistentVolumeClaim;
      if (claimRequest(pvc) <= claimRequest(old)) return;
      if (old.status?.phase !== "Bound") throw forbidden(PVCS, a.name, "Only bound persistent volume claims can be expanded");
      const name = pvc.spec?.storageClassName;
      let sc: StorageClass | undefined;
      if (name) {
        try {
          sc = (await classes()?.get(undefined, name))?.object as StorageClass | undefined;
        } catch (err) {
          if (!isApiError(err, "NotFound")) throw err;
        }
      }
      if (sc?.allowVolumeExpansion !== true) {
        throw forbidden(PVCS, a.name, "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize");
      }
    },
  };
}

export function storageObjectInUseProtection(naming: Naming): MutatingPlugin {
  const keys = storageKeys(naming);
  return {
    name: "StorageObjectInUseProtection",
    handles: (a) => a.operation === "CREATE" && a.resource.group === "" && (a.resource.resource === "persistentvolumeclaims" || a.resource.resource === "persistentvolumes") && a.subresource === undefined,
    admit(a) {
      const finalizer = a.resource.resource === "persistentvolumes" ? keys.pvProtection : keys.pvcProtection;
      const meta = a.object!.metadata;
      const list = (meta.finalizers ??= []);
      if (!list.includes(finalizer)) list.push(finalizer);
    },
  };
}
