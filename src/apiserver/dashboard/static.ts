// The dashboard's files (issue 21), served by the API server at /ui/ on its
// own port: the page and its assets, built by `npm run build`
// (scripts/build-ui.js) into dist/ui/ with content-hashed asset names and
// gzip and brotli copies beside each. They hold no cluster data (every API
// request the page makes carries the signed-in user's token through the
// filter chain), so they are answered before authentication, as any public
// static page: assets cached for a year (their names change with their
// content), the page revalidated on every load (ETag), each in the best
// encoding the browser accepts.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Incoming, Outgoing } from "../http/respond.js";

/** Where `npm run build` puts the dashboard: dist/ui beside dist/src. */
export const DEFAULT_UI_DIR = fileURLToPath(new URL("../../../ui/", import.meta.url));
export const UI_PATH = "/ui/";

interface StaticFile {
  readonly type: string;
  readonly etag: string;
  readonly immutable: boolean;
  readonly bodies: { readonly identity: Buffer; readonly gzip?: Buffer; readonly br?: Buffer };
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".map": "application/json",
  ".woff2": "font/woff2",
};

// The page loads only its own files and talks only to its own origin (wss: for exec and watches on the same host).
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export interface Dashboard {
  /** Whether the page was built (false: /ui/ answers 404 saying how to build it). */
  readonly built: boolean;
  /** Answers the request when it is the dashboard's (/ui, /ui/...); false when it is not. */
  serve(req: Incoming, res: Outgoing): boolean;
}

/** Reads the built dashboard from `dir` once, at start. */
export function dashboard(dir: string = DEFAULT_UI_DIR): Dashboard {
  const files = existsSync(join(dir, "index.html")) ? readFiles(dir) : new Map<string, StaticFile>();
  const built = files.size > 0;
  return {
    built,
    serve(req, res) {
      const path = pathOf(req.url ?? "/");
      if (path !== "/ui" && !path.startsWith(UI_PATH)) return false;
      const method = (req.method ?? "GET").toUpperCase();
      if (method !== "GET" && method !== "HEAD") {
        plain(res, 405, `method ${method} is not allowed on the dashboard's files`, { allow: "GET, HEAD" });
        return true;
      }
      if (path === "/ui") {
        res.writeHead(301, { location: UI_PATH, "content-length": 0 });
        res.end();
        return true;
      }
      if (!built) {
        plain(res, 404, "the dashboard is not built: run `npm run build` (scripts/build-ui.js writes dist/ui/)");
        return true;
      }
      const rel = path === UI_PATH ? "index.html" : path.slice(UI_PATH.length);
      const file = files.get(rel);
      if (file === undefined) {
        plain(res, 404, `${path} not found`);
        return true;
      }
      send(req, res, file, method === "HEAD");
      return true;
    },
  };
}

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

function readFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub === "" ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (!rel.endsWith(".gz") && !rel.endsWith(".br")) {
        const identity = readFileSync(join(dir, rel));
        const ext = rel.slice(rel.lastIndexOf("."));
        const gzip = existsSync(join(dir, `${rel}.gz`)) ? readFileSync(join(dir, `${rel}.gz`)) : undefined;
        const br = existsSync(join(dir, `${rel}.br`)) ? readFileSync(join(dir, `${rel}.br`)) : undefined;
        files.set(rel, {
          type: TYPES[ext] ?? "application/octet-stream",
          etag: `"${createHash("sha256").update(identity).digest("base64url").slice(0, 22)}"`,
          // scripts/build-ui.js names every asset by its content hash; the page itself keeps its name.
          immutable: rel.startsWith("assets/"),
          bodies: { identity, ...(gzip ? { gzip } : {}), ...(br ? { br } : {}) },
        });
      }
    }
  };
  walk("");
  return files;
}

/** The encodings the request accepts (q > 0), from Accept-Encoding. */
function accepted(header: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const part of (Array.isArray(header) ? header.join(",") : header ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (name && (q === undefined || Number(q.slice(2)) > 0)) out.add(name);
  }
  return out;
}

function send(req: Incoming, res: Outgoing, file: StaticFile, head: boolean): void {
  const headers: Record<string, string | number> = {
    "content-type": file.type,
    "cache-control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    etag: file.etag,
    vary: "Accept-Encoding",
    "x-content-type-options": "nosniff",
  };
  if (file.type.startsWith("text/html")) {
    headers["content-security-policy"] = CSP;
    headers["referrer-policy"] = "no-referrer";
  }
  const match = req.headers["if-none-match"];
  if (typeof match === "string" && match.split(",").some((m) => m.trim() === file.etag || m.trim() === "*")) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const accepts = accepted(req.headers["accept-encoding"]);
  let body = file.bodies.identity;
  if (file.bodies.br !== undefined && accepts.has("br")) {
    body = file.bodies.br;
    headers["content-encoding"] = "br";
  } else if (file.bodies.gzip !== undefined && (accepts.has("gzip") || accepts.has("*"))) {
    body = file.bodies.gzip;
    headers["content-encoding"] = "gzip";
  }
  headers["content-length"] = body.length;
  res.writeHead(200, headers);
  if (head) res.end();
  else res.end(body);
}

function plain(res: Outgoing, code: number, message: string, extra: Record<string, string> = {}): void {
  const body = Buffer.from(`${message}\n`);
  res.writeHead(code, { "content-type": "text/plain; charset=utf-8", "content-length": body.length, "x-content-type-options": "nosniff", ...extra });
  res.end(body);
}
