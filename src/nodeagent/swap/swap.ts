// Swap (seed 001, "Swap behavior setting"): refuse to start when swap is on
// and failSwapOn is true; otherwise decide each container's swap as upstream:
// NoSwap gives pods none, LimitedSwap gives Burstable pods' containers swap in
// proportion to their memory request.

import { existsSync } from "node:fs";
import type { SwapBehavior } from "../config/index.js";

export class SwapError extends Error {}

/** Throws when the node has swap on and the configuration forbids it. */
export function checkSwap(options: { failSwapOn: boolean; swapTotalBytes: number }): void {
  if (options.failSwapOn && options.swapTotalBytes > 0) {
    throw new SwapError(
      `running with swap on is not supported, please disable swap or set failSwapOn to false (the node has ${options.swapTotalBytes} bytes of swap; see /proc/swaps)`,
    );
  }
}

export function cgroupV2(): boolean {
  return existsSync("/sys/fs/cgroup/cgroup.controllers");
}

export interface ContainerSwapInput {
  behavior: SwapBehavior | "";
  qosClass: string;
  /** The container's memory request and limit in bytes (0 when unset). */
  memoryRequestBytes: number;
  memoryLimitBytes: number;
  nodeMemoryBytes: number;
  nodeSwapBytes: number;
  /** Node- or cluster-critical pods never swap. */
  critical: boolean;
  cgroupV2: boolean;
}

/** The CRI resource fields carrying the swap decision. */
export interface SwapResources {
  memorySwapLimitInBytes: number;
  unified: Record<string, string>;
}

/** Upstream's per-container swap limit: request / node memory × node swap, for Burstable pods only. */
export function limitedSwapBytes(input: ContainerSwapInput): number {
  if (input.qosClass !== "Burstable" || input.critical || input.memoryRequestBytes <= 0 || input.nodeMemoryBytes <= 0) return 0;
  if (input.memoryLimitBytes > 0 && input.memoryLimitBytes === input.memoryRequestBytes) return 0;
  return Math.floor((input.memoryRequestBytes / input.nodeMemoryBytes) * input.nodeSwapBytes);
}

export function containerSwap(input: ContainerSwapInput): SwapResources {
  const swap = input.behavior === "LimitedSwap" ? limitedSwapBytes(input) : 0;
  // memory+swap total as cgroup v1 counts it; only meaningful with a memory limit.
  const memorySwapLimitInBytes = input.memoryLimitBytes > 0 ? input.memoryLimitBytes + swap : 0;
  return { memorySwapLimitInBytes, unified: input.cgroupV2 ? { "memory.swap.max": String(swap) } : {} };
}
