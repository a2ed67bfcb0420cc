// Completion indexes of an Indexed Job as status.completedIndexes writes
// them: sorted, consecutive runs collapsed ("1,3-5,7"), upstream's
// format, which kubectl and users read.

export function parseIndexes(text: string | null | undefined, limit: number): Set<number> {
  const out = new Set<number>();
  for (const part of (text ?? "").split(",")) {
    if (part === "") continue;
    const [a, b] = part.split("-");
    const from = Number(a);
    const to = b === undefined ? from : Number(b);
    if (!Number.isInteger(from) || !Number.isInteger(to)) continue;
    for (let i = from; i <= to && i < limit; i++) out.add(i);
  }
  return out;
}

export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j + 1;
  }
  return parts.join(",");
}
