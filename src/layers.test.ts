// The import rule of docs/architecture.md, enforced: every relative import in src/ points to the
// same folder or to a layer below (`LAYERS`, the one home of the layer table; the doc's table must
// list the same folders, and this test checks that too); no two files import each other, however
// long the way round (Tarjan's strongly connected components over the file graph); and inside every
// folder its subfolders and files depend on each other one way only.
//
// Decisions:
// - Test code (*.test.ts, *.case.ts, *.bench.ts, testing.ts, testing/ folders) may import any layer:
//   a machinery test may run against the real Pod schema, a client test against a real API server.
//   Nothing in production imports test code (checked below), so test code adds no arrow anyone
//   depends on. Test code is still in the cycle check.
// - `import type` counts everywhere. A type is a dependency like any other: a type imported from an
//   upper layer makes the lower one impossible to read, build or reuse alone, and a cycle through
//   types is the same tangle for a reader even if the runtime never sees it.
// - Peers (folders in the same rank) do not import each other: storage, api and component are
//   independent libraries, and the programs (apiserver, controllers, scheduler, nodeagent, proxy,
//   dns) talk to each other over HTTP only.
//
// The source tree is found from the compiled test: dist/src/layers.test.js → ../../src.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Bottom to top. A folder may import its own files and any folder of a lower rank. */
const LAYERS: readonly (readonly string[])[] = [
  ["machinery"],
  ["storage", "api", "component"],
  ["client"],
  ["apiserver", "controllers", "scheduler", "nodeagent", "proxy", "dns", "simulator"],
  ["cloud"],
  ["cli"],
];

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const srcRoot = join(repo, "src");

interface Import {
  readonly from: string; // path relative to src/, with "/" separators
  readonly to: string; // resolved target relative to src/ (may start with "../" when it leaves src/)
  readonly line: number;
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

const isTestCode = (file: string): boolean =>
  /\.(test|case|bench)\.ts$/.test(file) || /(^|\/)testing(\.ts$|\/)/.test(file);

/**
 * The text with comments blanked (offsets and line breaks kept), so an import inside a comment is not
 * seen. Strings, template literals and regular expression literals are skipped whole: a `/*` inside
 * "*\/*" is not a comment.
 */
function blankComments(text: string): string {
  const out = text.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  let i = 0;
  let lastSignificant = ""; // the previous non-space code character, to tell a regex from a division
  const templateDepth: number[] = []; // brace depth at each open `${`
  let braces = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
      i++;
      lastSignificant = c;
      continue;
    }
    if (c === "`" || (c === "}" && templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === braces)) {
      if (c === "}") templateDepth.pop();
      i++;
      while (i < text.length && text[i] !== "`") {
        if (text[i] === "\\") i += 2;
        else if (text[i] === "$" && text[i + 1] === "{") {
          templateDepth.push(braces);
          i += 2;
          break;
        } else i++;
      }
      if (text[i] === "`") i++;
      lastSignificant = "`";
      continue;
    }
    if (c === "/" && (lastSignificant === "" || "(,=:[!&|?{};+-*%<>~^".includes(lastSignificant) || /\b(return|typeof|case|of|in)$/.test(text.slice(Math.max(0, i - 8), i).trimEnd()))) {
      i++;
      let inClass = false;
      while (i < text.length && text[i] !== "\n") {
        const r = text[i]!;
        if (r === "\\") i++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        i++;
      }
      i++;
      lastSignificant = "/";
      continue;
    }
    if (c === "{") braces++;
    if (c === "}") braces--;
    if (!/\s/.test(c)) lastSignificant = c;
    i++;
  }
  return out.join("");
}

// Import and export clauses hold only names, braces, commas, `*` and `as`; the tempered clause stops
// at the next statement so a declaration before an import cannot swallow it.
const STATIC = /^[ \t]*(import|export)(\s+type\b)?((?:(?!\b(?:import|export)\b)[\w\s,{}*$])*?)\bfrom\s*(["'])([^"'\n]+)\4/gm;
const SIDE_EFFECT = /^[ \t]*import\s*(["'])([^"'\n]+)\1/gm;
const DYNAMIC = /\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g;

function importsOf(file: string): Import[] {
  const code = blankComments(readFileSync(file, "utf8"));
  const from = relative(srcRoot, file).split(sep).join("/");
  const found: Import[] = [];
  const add = (specifier: string, index: number, typeOnly: boolean) => {
    if (!specifier.startsWith(".")) return; // packages and node: builtins
    const target = resolve(dirname(file), specifier).replace(/\.js$/, ".ts");
    const line = code.slice(0, index).split("\n").length;
    found.push({ from, to: relative(srcRoot, target).split(sep).join("/"), line, typeOnly });
  };
  for (const m of code.matchAll(STATIC)) {
    add(m[5]!, m.index, m[2] !== undefined);
  }
  for (const m of code.matchAll(SIDE_EFFECT)) add(m[2]!, m.index + m[0].indexOf("import"), false);
  for (const m of code.matchAll(DYNAMIC)) add(m[2]!, m.index, false);
  return found;
}

const folderOf = (path: string): string => (path.includes("/") ? path.slice(0, path.indexOf("/")) : "");
const rankOf = (folder: string): number => LAYERS.findIndex((rank) => rank.includes(folder));

const files = sourceFiles(srcRoot).map((f) => relative(srcRoot, f).split(sep).join("/")).sort();
const imports = files.flatMap((f) => importsOf(join(srcRoot, f)));
const where = (i: Import) => `src/${i.from}:${i.line}`;

test("layers: every folder of src/ has a layer, and only tests sit at the top of src/", () => {
  const folders = [...new Set(files.map(folderOf))];
  const unplaced = folders.filter((f) => f !== "" && rankOf(f) < 0);
  assert.deepEqual(unplaced, [], `folders missing from LAYERS in ${relative(repo, fileURLToPath(import.meta.url))}`);
  const loose = files.filter((f) => folderOf(f) === "" && !isTestCode(f));
  assert.deepEqual(loose, [], "production files directly in src/ have no layer: put them in a folder");
});

test("layers: every relative import resolves to a file, and production code stays in src/", () => {
  const known = new Set(files);
  const broken = imports.filter((i) => !known.has(i.to) && !existsSync(join(srcRoot, i.to))).map((i) => `${where(i)} → ${i.to}`);
  assert.deepEqual(broken, []);
  // Tests may use test/support/ (fixtures shared with the end-to-end tests); production code may not leave src/.
  const outside = imports.filter((i) => !isTestCode(i.from) && i.to.startsWith("../")).map((i) => `${where(i)} → ${i.to}`);
  assert.deepEqual(outside, []);
});

test("layers: no import runs up a layer or across to a peer (production code)", () => {
  const upward: string[] = [];
  for (const i of imports) {
    if (isTestCode(i.from)) continue;
    const a = folderOf(i.from);
    const b = folderOf(i.to);
    if (a === b || b === "..") continue; // leaving src/ is the test above
    const ra = rankOf(a);
    const rb = rankOf(b);
    if (rb < ra) continue;
    const how = rb === ra ? "peer" : "up";
    upward.push(`${where(i)}: ${a} → ${b} (${how}${i.typeOnly ? ", type only" : ""}) imports src/${i.to}`);
  }
  assert.deepEqual(upward, [], `imports against the layer order (bottom to top: ${LAYERS.map((r) => r.join(" | ")).join(" → ")})`);
});

test("layers: production code never imports test code", () => {
  const bad = imports.filter((i) => !isTestCode(i.from) && isTestCode(i.to)).map((i) => `${where(i)} → src/${i.to}`);
  assert.deepEqual(bad, []);
});

/** Strongly connected components with more than one node (Tarjan), each as its sorted nodes. */
function cycles(nodes: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return out;
}

test("layers: no import cycles between files", () => {
  const edges = new Map<string, string[]>();
  for (const i of imports) {
    if (i.from === i.to) continue;
    const list = edges.get(i.from) ?? [];
    list.push(i.to);
    edges.set(i.from, list);
  }
  const found = cycles(files, edges).map((component) => {
    const inside = new Set(component);
    const arrows = imports.filter((i) => inside.has(i.from) && inside.has(i.to) && i.from !== i.to);
    return `cycle of ${component.length}: ${component.join(", ")}\n${arrows.map((i) => `    ${where(i)} → src/${i.to}${i.typeOnly ? " (type)" : ""}`).join("\n")}`;
  });
  assert.deepEqual(found, []);
});

/**
 * Where an import crosses inside a folder: the folder both files share and the two entries of it (a
 * file or a subfolder) the import leaves and enters. `api/apps/x.ts → api/core/y.ts` crosses `api`
 * from `apps/` to `core/`; two files of one folder give two files.
 */
function crossing(i: Import): { folder: string; from: string; to: string } {
  const a = i.from.split("/");
  const b = i.to.split("/");
  let k = 0;
  while (k < a.length - 1 && k < b.length - 1 && a[k] === b[k]) k++;
  const entry = (parts: string[]) => parts[k]! + (k < parts.length - 1 ? "/" : "");
  return { folder: a.slice(0, k).join("/"), from: entry(a), to: entry(b) };
}

test("layers: inside every folder, its subfolders and files import each other one way (production code)", () => {
  // The file check above misses a tangle of folders: registry/store.ts → admission/index.ts while
  // admission/priority.ts → registry/store.ts is no file cycle, yet neither folder can be read first.
  // Test code is left out: a test helper may reach up for fixtures, as it may across layers.
  const byFolder = new Map<string, { nodes: Set<string>; edges: Map<string, string[]>; via: Import[] }>();
  for (const i of imports) {
    if (isTestCode(i.from) || isTestCode(i.to) || i.to.startsWith("../") || i.from === i.to) continue;
    const c = crossing(i);
    // src/ itself is the layer check's: a cycle there needs an arrow up or across, already reported.
    if (c.from === c.to || c.folder === "") continue;
    const g = byFolder.get(c.folder) ?? { nodes: new Set<string>(), edges: new Map<string, string[]>(), via: [] };
    byFolder.set(c.folder, g);
    g.nodes.add(c.from).add(c.to);
    g.edges.set(c.from, [...(g.edges.get(c.from) ?? []), c.to]);
    g.via.push(i);
  }
  const found: string[] = [];
  for (const [folder, g] of [...byFolder].sort(([a], [b]) => a.localeCompare(b))) {
    for (const component of cycles([...g.nodes].sort(), g.edges)) {
      if (component.every((n) => !n.endsWith("/"))) continue; // files only: the file check reports it
      const inside = new Set(component);
      const arrows = g.via.filter((i) => inside.has(crossing(i).from) && inside.has(crossing(i).to));
      found.push(`in src/${folder}/: ${component.join(" ↔ ")}\n${arrows.map((i) => `    ${where(i)} → src/${i.to}${i.typeOnly ? " (type)" : ""}`).join("\n")}`);
    }
  }
  assert.deepEqual(found, []);
});

test("layers: docs/architecture.md lists the same layers as LAYERS", () => {
  const doc = readFileSync(join(repo, "docs", "architecture.md"), "utf8");
  // The doc's layer table: rows `| <rank> | `src/a/`, `src/b/` | ... |`, rank 0 at the bottom.
  const rows = [...doc.matchAll(/^\|\s*(\d+)\s*\|([^|]*)\|/gm)].map((m) => ({
    rank: Number(m[1]),
    folders: [...m[2]!.matchAll(/`src\/([a-z-]+)\/`/g)].map((f) => f[1]!),
  }));
  const documented: string[][] = [];
  for (const row of rows) documented[row.rank] = row.folders;
  assert.deepEqual(documented, LAYERS.map((rank) => [...rank]), "docs/architecture.md's layer table differs from LAYERS");
});
