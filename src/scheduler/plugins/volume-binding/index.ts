// VolumeBinding (upstream's plugin, simplified): a pod's persistentVolumeClaim
// volumes decide where it may go.
// - PreFilter: a missing or deleted claim, or an unbound claim of an Immediate
//   class, makes the pod unschedulable with upstream's messages; pods without
//   claims skip the filter.
// - Filter: a bound claim's volume must be reachable from the node (its node
//   affinity); an unbound claim of a WaitForFirstConsumer class needs a free
//   volume reachable from the node, or a class with a provisioner.
// - PreBind: the delayed claims get `volume.<domain>/selected-node`, which the
//   binder and the provisioner act on; the pod is bound at once and the node
//   agent waits for the claims to be Bound.
// Left out (see docs/storage-volumes.md): reserving volumes across pods of one
// cycle, waiting in PreBind for the bind to complete, CSI capacity and volume
// limits, and allowedTopologies of the class.

import { findMatchingVolume, volumeReachableFrom, type PersistentVolume, type PersistentVolumeClaim } from "../../../api/core/index.js";
import type { StorageClass } from "../../../api/storage/index.js";
import { storageKeys, type Naming } from "../../../machinery/naming.js";
import type { CycleState, FilterPlugin, PreBindPlugin, PreFilterPlugin, Status } from "../../framework/interface.js";
import { unresolvable } from "../../framework/interface.js";
import type { NodeInfo } from "../../framework/node-info.js";
import type { PodInfo } from "../../framework/pod-info.js";

const NAME = "VolumeBinding";
export const ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims";
export const ERR_NODE_CONFLICT = "node(s) had volume node affinity conflict";
export const ERR_NO_VOLUME = "node(s) didn't find available persistent volumes to bind";
/** upstream's marker of a class with no dynamic provisioning. */
const NO_PROVISIONER = "kubernetes.io/no-provisioner";

/** What the plugin reads, from the scheduler's informers. */
export interface VolumeLister {
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  volumes(): PersistentVolume[];
  storageClass(name: string): StorageClass | undefined;
  /** Writes the selected-node annotation of a claim. */
  selectNode(claim: PersistentVolumeClaim, annotation: string, nodeName: string): Promise<void>;
}

interface State {
  bound: PersistentVolume[];
  delayed: PersistentVolumeClaim[];
}

export function volumeBinding(naming: Naming, lister: VolumeLister): PreFilterPlugin & FilterPlugin & PreBindPlugin {
  const selectedNode = storageKeys(naming).selectedNode;
  return {
    name: NAME,
    events: ["NodeAdd", "NodeLabelChange", "PersistentVolumeClaimAdd", "PersistentVolumeClaimUpdate", "PersistentVolumeAdd", "PersistentVolumeUpdate", "StorageClassAdd"],

    preFilter(state: CycleState, pi: PodInfo): Status | "skip" | undefined {
      const pod = pi.pod;
      const names = (pod.spec?.volumes ?? []).flatMap((v) => {
        const src = v["persistentVolumeClaim"] as { claimName?: string } | undefined;
        if (src?.claimName) return [src.claimName];
        return v["ephemeral"] != null ? [`${pod.metadata.name}-${v.name}`] : [];
      });
      if (names.length === 0) return "skip";
      const ns = pod.metadata.namespace ?? "default";
      const s: State = { bound: [], delayed: [] };
      let immediate = false;
      for (const name of names) {
        const pvc = lister.claim(ns, name);
        if (pvc === undefined) return unresolvable(NAME, `persistentvolumeclaim "${name}" not found`);
        if (pvc.metadata.deletionTimestamp) return unresolvable(NAME, `persistentvolumeclaim "${name}" is being deleted`);
        const volumeName = pvc.spec?.volumeName;
        if (volumeName) {
          const pv = lister.volume(volumeName);
          if (pv === undefined) return unresolvable(NAME, `pvc(s) bound to non-existent pv(s)`);
          s.bound.push(pv);
          continue;
        }
        const cls = pvc.spec?.storageClassName ? lister.storageClass(pvc.spec.storageClassName) : undefined;
        if (cls?.volumeBindingMode === "WaitForFirstConsumer") s.delayed.push(pvc);
        else immediate = true;
      }
      if (immediate) return unresolvable(NAME, ERR_UNBOUND_IMMEDIATE);
      state.set(NAME, s);
      return undefined;
    },

    filter(state: CycleState, _pi: PodInfo, node: NodeInfo): Status | undefined {
      const s = state.get(NAME) as State | undefined;
      if (s === undefined) return undefined;
      const here = { name: node.name, labels: node.labels };
      if (s.bound.some((pv) => !volumeReachableFrom(pv, here))) return unresolvable(NAME, ERR_NODE_CONFLICT);
      for (const pvc of s.delayed) {
        if (findMatchingVolume(lister.volumes(), pvc, here) !== undefined) continue;
        const cls = lister.storageClass(pvc.spec?.storageClassName ?? "");
        if (cls?.provisioner && cls.provisioner !== NO_PROVISIONER) continue;
        return unresolvable(NAME, ERR_NO_VOLUME);
      }
      return undefined;
    },

    async preBind(state: CycleState, _pi: PodInfo, nodeName: string): Promise<void> {
      const s = state.get(NAME) as State | undefined;
      for (const pvc of s?.delayed ?? []) {
        if (pvc.metadata.annotations?.[selectedNode] === nodeName) continue;
        await lister.selectNode(pvc, selectedNode, nodeName);
      }
    },
  };
}
