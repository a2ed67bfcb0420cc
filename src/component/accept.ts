// A small Accept-header reader for the component endpoints: media ranges with
// their parameters, ordered by q (stable for equal q), as /metrics and the
// z-pages negotiate them. The resource API has its own negotiation.

export interface MediaRange {
  /** "text/plain", "application/json", "*\/*" (lower case). */
  readonly type: string;
  /** Parameters other than q, names lower-cased. */
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === "") return [];
  const ranges: MediaRange[] = [];
  for (const clause of header.split(",")) {
    const [type = "", ...rest] = clause.split(";").map((p) => p.trim());
    if (type === "") continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rest) {
      const eq = p.indexOf("=");
      if (eq < 0) continue;
      const name = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
      if (name === "q") q = Number(value);
      else params[name] = value;
    }
    if (!(q > 0)) continue;
    ranges.push({ type: type.toLowerCase(), params, q });
  }
  return ranges.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i).map(({ r }) => r);
}

/** Whether the range admits `type` ("text/plain" is admitted by text/plain, text/* and *\/*). */
export function admits(range: MediaRange, type: string): boolean {
  if (range.type === "*/*" || range.type === type) return true;
  return range.type.endsWith("/*") && type.startsWith(range.type.slice(0, -1));
}
