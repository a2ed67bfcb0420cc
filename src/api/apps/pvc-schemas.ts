// The PersistentVolumeClaim object type, which StatefulSet volumeClaimTemplates
// embed, is core's (core/persistent-volume-schemas.ts); apps registers it too
// so that apps' schemas resolve when apps is registered without core's kinds.

export { PERSISTENT_VOLUME_TYPES as PVC_TYPES, registerPersistentVolumeSchemas as registerPvcSchemas } from "../core/index.js";
