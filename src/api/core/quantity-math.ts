// Exact resource-quantity arithmetic for the admission steps and the quota
// controller (LimitRanger, ResourceQuota): values as BigInt milli-units,
// sums and comparisons without float drift, and upstream's canonical text
// (Quantity.String: "2" for "2000m", "1Gi" for "1024Mi", "1500m", "2k"),
// which the quota and limit messages and status.used carry.

const BINARY: Readonly<Record<string, bigint>> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL_EXP: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** A quantity: its value in milli-units (rounded up, as upstream's MilliValue) and whether it was written in binary units. */
export interface Quantity {
  readonly milli: bigint;
  readonly binary: boolean;
}

export const ZERO: Quantity = { milli: 0n, binary: false };

/** The quantity in `value` ("100m", "1Gi", 2, "1e3"), or undefined when it does not parse. */
export function quantity(value: unknown): Quantity | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return undefined;
    value = String(value);
  }
  if (typeof value !== "string") return undefined;
  const m = QUANTITY.exec(value.trim());
  if (m === null) return undefined;
  const [, sign, whole = "", frac = "", suffix, exp] = m;
  if (whole === "" && frac === "") return undefined;
  // digits × 10^(scale) × multiplier, in milli: digits × 10^(scale+3).
  let digits = BigInt(whole + frac || "0");
  let scale = -frac.length + 3;
  let multiplier = 1n;
  if (exp !== undefined) scale += Number(exp);
  else if (suffix !== undefined && suffix in BINARY) multiplier = BINARY[suffix]!;
  else scale += DECIMAL_EXP[suffix ?? ""] ?? 0;
  digits *= multiplier;
  let milli: bigint;
  if (scale >= 0) milli = digits * 10n ** BigInt(scale);
  else {
    const div = 10n ** BigInt(-scale);
    milli = digits / div + (digits % div === 0n ? 0n : 1n);
  }
  return { milli: sign === "-" ? -milli : milli, binary: suffix !== undefined && suffix in BINARY };
}

export function add(a: Quantity, b: Quantity): Quantity {
  return { milli: a.milli + b.milli, binary: a.milli === 0n ? b.binary : a.binary };
}

export function sub(a: Quantity, b: Quantity): Quantity {
  return { milli: a.milli - b.milli, binary: a.binary };
}

export function cmp(a: Quantity, b: Quantity): number {
  return a.milli < b.milli ? -1 : a.milli > b.milli ? 1 : 0;
}

const DECIMAL_SUFFIXES: readonly [bigint, string][] = [
  [10n ** 21n, "E"],
  [10n ** 18n, "P"],
  [10n ** 15n, "T"],
  [10n ** 12n, "G"],
  [10n ** 9n, "M"],
  [10n ** 6n, "k"],
  [10n ** 3n, ""],
];
const BINARY_SUFFIXES: readonly [bigint, string][] = [
  [(1n << 60n) * 1000n, "Ei"],
  [(1n << 50n) * 1000n, "Pi"],
  [(1n << 40n) * 1000n, "Ti"],
  [(1n << 30n) * 1000n, "Gi"],
  [(1n << 20n) * 1000n, "Mi"],
  [(1n << 10n) * 1000n, "Ki"],
];

/** upstream's canonical Quantity.String(): the largest suffix that keeps the number whole. */
export function formatQuantity(q: Quantity): string {
  const neg = q.milli < 0n;
  const abs = neg ? -q.milli : q.milli;
  const sign = neg ? "-" : "";
  if (abs === 0n) return "0";
  if (q.binary && abs % 1000n === 0n && abs >= 1024n * 1000n) {
    for (const [unit, suffix] of BINARY_SUFFIXES) if (abs % unit === 0n) return `${sign}${abs / unit}${suffix}`;
    return `${sign}${abs / 1000n}`;
  }
  for (const [unit, suffix] of DECIMAL_SUFFIXES) if (abs % unit === 0n) return `${sign}${abs / unit}${suffix}`;
  return `${sign}${abs}m`;
}

/** The canonical text of a quantity's string form (a value that does not parse is kept as it is). */
export function canonical(value: unknown): string {
  const q = quantity(value);
  return q === undefined ? String(value) : formatQuantity(q);
}

/** `milli` as a quantity of the same kind as `like`. */
export function fromMilli(milli: bigint, like: Quantity = ZERO): Quantity {
  return { milli, binary: like.binary };
}
