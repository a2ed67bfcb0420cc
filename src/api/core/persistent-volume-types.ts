// TypeScript views of PersistentVolume and PersistentVolumeClaim; fields
// optional, as request bodies are untrusted until validated.

import type { ApiObject, LabelSelector } from "../../machinery/index.js";
import type { NodeSelectorTerm } from "./node-matching.js";
import type { ObjectReference, Quantities } from "./types.js";

export interface PersistentVolumeSpec {
  capacity?: Quantities | null;
  hostPath?: { path?: string; type?: string } | null;
  nfs?: { server?: string; path?: string; readOnly?: boolean } | null;
  local?: { path?: string; fsType?: string } | null;
  csi?: { driver?: string; volumeHandle?: string; readOnly?: boolean; fsType?: string; volumeAttributes?: Record<string, string> } | null;
  accessModes?: string[] | null;
  claimRef?: ObjectReference | null;
  persistentVolumeReclaimPolicy?: string;
  storageClassName?: string;
  mountOptions?: string[] | null;
  volumeMode?: string | null;
  nodeAffinity?: { required?: { nodeSelectorTerms?: NodeSelectorTerm[] | null } | null } | null;
  volumeAttributesClassName?: string | null;
}

export interface PersistentVolume extends ApiObject {
  spec?: PersistentVolumeSpec;
  status?: { phase?: string; message?: string; reason?: string; lastPhaseTransitionTime?: string | null };
}

export interface PersistentVolumeClaimSpec {
  accessModes?: string[] | null;
  selector?: LabelSelector | null;
  resources?: { limits?: Quantities | null; requests?: Quantities | null } | null;
  volumeName?: string;
  storageClassName?: string | null;
  volumeMode?: string | null;
  dataSource?: Record<string, unknown> | null;
  dataSourceRef?: Record<string, unknown> | null;
  volumeAttributesClassName?: string | null;
}

export interface PersistentVolumeClaim extends ApiObject {
  spec?: PersistentVolumeClaimSpec;
  status?: {
    phase?: string;
    accessModes?: string[] | null;
    capacity?: Quantities | null;
    conditions?: Record<string, unknown>[] | null;
    allocatedResources?: Quantities | null;
    currentVolumeAttributesClassName?: string | null;
  };
}
