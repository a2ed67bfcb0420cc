// TypeScript views of the storage.<suffix> kinds; fields optional, as request
// bodies are untrusted until validated.

import type { ApiObject, LabelSelector } from "../../machinery/index.js";
import type { PersistentVolumeSpec } from "../core/index.js";

export interface StorageClass extends ApiObject {
  provisioner?: string;
  parameters?: Record<string, string> | null;
  reclaimPolicy?: string;
  mountOptions?: string[] | null;
  allowVolumeExpansion?: boolean | null;
  volumeBindingMode?: string;
  allowedTopologies?: { matchLabelExpressions?: { key?: string; values?: string[] }[] | null }[] | null;
}

export interface CSIDriver extends ApiObject {
  spec?: {
    attachRequired?: boolean | null;
    podInfoOnMount?: boolean | null;
    volumeLifecycleModes?: string[] | null;
    storageCapacity?: boolean | null;
    fsGroupPolicy?: string | null;
    tokenRequests?: { audience?: string; expirationSeconds?: number | null }[] | null;
    requiresRepublish?: boolean | null;
    seLinuxMount?: boolean | null;
    nodeAllocatableUpdatePeriodSeconds?: number | null;
  };
}

export interface CSINodeDriver {
  name?: string;
  nodeID?: string;
  topologyKeys?: string[] | null;
  allocatable?: { count?: number | null } | null;
}

export interface CSINode extends ApiObject {
  spec?: { drivers?: CSINodeDriver[] | null };
}

export interface VolumeAttachment extends ApiObject {
  spec?: {
    attacher?: string;
    source?: { persistentVolumeName?: string | null; inlineVolumeSpec?: PersistentVolumeSpec | null };
    nodeName?: string;
  };
  status?: { attached?: boolean; attachmentMetadata?: Record<string, string> | null; attachError?: { message?: string } | null; detachError?: { message?: string } | null };
}

export interface CSIStorageCapacity extends ApiObject {
  nodeTopology?: LabelSelector | null;
  storageClassName?: string;
  capacity?: string | number | null;
  maximumVolumeSize?: string | number | null;
}
