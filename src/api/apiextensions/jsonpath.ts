// The JSONPath subset of printer columns, scale paths and selectable fields
// (upstream's kubectl JSONPath without ranges and functions): `.a.b`,
// `.a[0]`, `.a[*]`, `.a['dotted.key']`, and filters `[?(@.type=="Ready")]`.
// Parsed once per definition; evaluation returns every match.

export type Step =
  | { readonly kind: "field"; readonly name: string }
  | { readonly kind: "index"; readonly index: number }
  | { readonly kind: "all" }
  | { readonly kind: "filter"; readonly path: readonly Step[]; readonly op: "==" | "!="; readonly value: unknown };

/** The steps of a path, or undefined when it is not in the subset. */
export function parseJsonPath(input: string): Step[] | undefined {
  let s = input.trim();
  if (s.startsWith("{") && s.endsWith("}")) s = s.slice(1, -1).trim();
  if (s.startsWith("$")) s = s.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ".") {
      const m = /^[A-Za-z0-9_\-$/]+/.exec(s.slice(i + 1));
      if (m === null) {
        if (s[i + 1] === "[") {
          i++;
          continue;
        }
        if (i + 1 === s.length && steps.length === 0) return steps; // "."
        return undefined;
      }
      steps.push({ kind: "field", name: m[0] });
      i += 1 + m[0].length;
      continue;
    }
    if (c === "[") {
      const end = findClose(s, i);
      if (end < 0) return undefined;
      const inner = s.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === "*") steps.push({ kind: "all" });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: "index", index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ kind: "field", name: inner.slice(1, -1) });
      else if (inner.startsWith("?(") && inner.endsWith(")")) {
        const m = /^@((?:\.[A-Za-z0-9_\-]+)+)\s*(==|!=)\s*(.+)$/.exec(inner.slice(2, -1).trim());
        if (m === null) return undefined;
        const path = parseJsonPath(m[1]!);
        if (path === undefined) return undefined;
        let value: unknown;
        const raw = m[3]!.trim();
        if (/^'.*'$/.test(raw)) value = raw.slice(1, -1);
        else {
          try {
            value = JSON.parse(raw);
          } catch {
            return undefined;
          }
        }
        steps.push({ kind: "filter", path, op: m[2] as "==" | "!=", value });
      } else return undefined;
      continue;
    }
    return undefined;
  }
  return steps;
}

function findClose(s: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "[" || c === "(") depth++;
    else if (c === "]" || c === ")") {
      depth--;
      if (depth === 0 && c === "]") return i;
    }
  }
  return -1;
}

/** Every value the path reaches in `value`. */
export function evaluate(steps: readonly Step[], value: unknown): unknown[] {
  let current: unknown[] = [value];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      switch (step.kind) {
        case "field":
          if (typeof v === "object" && v !== null && !Array.isArray(v) && step.name in v) next.push((v as Record<string, unknown>)[step.name]);
          break;
        case "index":
          if (Array.isArray(v)) {
            const at = step.index < 0 ? v.length + step.index : step.index;
            if (at >= 0 && at < v.length) next.push(v[at]);
          }
          break;
        case "all":
          if (Array.isArray(v)) next.push(...v);
          else if (typeof v === "object" && v !== null) next.push(...Object.values(v));
          break;
        case "filter":
          if (Array.isArray(v)) {
            for (const item of v) {
              const got = evaluate(step.path, item);
              const eq = got.length > 0 && got[0] === step.value;
              if (step.op === "==" ? eq : got.length > 0 && !eq) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current;
}

/** Set the value at a path of plain fields (scale's spec replicas), creating objects on the way. */
export function setAt(steps: readonly Step[], root: Record<string, unknown>, value: unknown): void {
  let obj = root;
  steps.forEach((step, i) => {
    if (step.kind !== "field") return;
    if (i === steps.length - 1) obj[step.name] = value;
    else {
      const child = obj[step.name];
      obj = typeof child === "object" && child !== null && !Array.isArray(child) ? (child as Record<string, unknown>) : (obj[step.name] = {});
    }
  });
}
