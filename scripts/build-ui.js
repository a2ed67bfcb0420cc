// Bundles the dashboard (ui/, issue 21) into dist/ui/ for the API server to
// serve at /ui/ (src/apiserver/dashboard/static.ts): one script and one style
// sheet named by their content hash, the page that loads them, and gzip and
// brotli copies of each, so the server compresses nothing at run time.
// esbuild runs as WebAssembly (esbuild-wasm): nothing native, nothing fetched.

import { build } from "esbuild-wasm";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "ui");
const started = Date.now();
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

const result = await build({
  entryPoints: [join(root, "ui", "src", "main.tsx")],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022"],
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: join(out, "assets"),
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
});

const assets = Object.keys(result.metafile.outputs).map((p) => basename(p));
const script = assets.find((a) => a.endsWith(".js"));
const style = assets.find((a) => a.endsWith(".css"));
if (script === undefined) throw new Error("build-ui: esbuild wrote no script");
const page = readFileSync(join(root, "ui", "index.html"), "utf8")
  .replace("<!--style-->", style ? `<link rel="stylesheet" href="assets/${style}">` : "")
  .replace("<!--script-->", `<script type="module" src="assets/${script}"></script>`);
writeFileSync(join(out, "index.html"), page);

for (const file of ["index.html", ...assets.map((a) => `assets/${a}`)]) {
  const body = readFileSync(join(out, file));
  writeFileSync(join(out, `${file}.gz`), gzipSync(body, { level: 9 }));
  writeFileSync(join(out, `${file}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }));
}
const size = (f) => readFileSync(join(out, f)).length;
process.stderr.write(`build-ui: dist/ui/assets/${script} (${size(`assets/${script}`)} bytes, ${size(`assets/${script}.br`)} brotli) in ${Date.now() - started} ms\n`);
