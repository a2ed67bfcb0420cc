// Resource quantities ("100m", "1Gi", "1.5", "2e3") as numbers, for the few
// comparisons core strategies make (QoS class, requests vs limits). Exact
// canonical formatting is the codec's job, not this module's.

const BINARY: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Readonly<Record<string, number>> = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** The value of a quantity, or undefined when it does not parse. */
export function parseQuantity(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string") return undefined;
  const m = QUANTITY.exec(value.trim());
  if (m === null) return undefined;
  const base = Number(m[1]);
  if (m[3] !== undefined) return base * 10 ** Number(m[3]);
  const suffix = m[2] ?? "";
  return base * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

/** upstream's message for a quantity that does not parse. */
export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
