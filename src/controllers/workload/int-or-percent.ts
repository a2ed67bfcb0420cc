// maxSurge, maxUnavailable and friends: an int, or a percent of a total.

import type { IntOrString } from "../../api/apps/types.js";

/** An int, or a percent of `total` rounded up or down (upstream's GetScaledValueFromIntOrPercent). */
export function scaled(value: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === "number") return value;
  const m = /^(\d+)%$/.exec(value);
  if (m === null) return Number(value) || 0;
  const v = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(v) : Math.floor(v);
}
