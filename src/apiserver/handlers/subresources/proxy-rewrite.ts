// What the proxy subresources change in a backend's answer, as upstream's
// proxy transport does: links that point at the backend itself would leave
// the API server's proxy path, so
//   - a Location header (redirects) and the URL-valued attributes of HTML
//     tags (`a href`, `img src`, `form action`, ... upstream's list) that
//     are absolute paths, or absolute URLs naming the backend's host (or the
//     API server's, as the client addressed it), get the proxy path in front
//     (`/rewriteme` → `/api/v1/namespaces/NS/pods/NAME/proxy/rewriteme`);
//     relative links, other hosts and paths already under the prefix are
//     left alone;
//   - only `text/html` bodies are rewritten, plain or gzip/deflate encoded
//     (re-encoded the same way); another encoding passes through unchanged.
// The HTML is rewritten as it streams: text, comments, end tags and the
// content of raw-text elements (script, style, ...) pass through byte for
// byte, and a start tag is held only until its closing `>`. Bytes are
// handled as latin1 so any encoding of the text survives; HTML's syntax is
// ASCII.

import { posix } from "node:path";
import { Transform, type TransformCallback } from "node:stream";
import { createDeflate, createDeflateRaw, createGunzip, createGzip, createInflate, createInflateRaw } from "node:zlib";

/** Which attributes of which tags hold a URL (upstream's table). */
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ["href"],
  applet: ["codebase"],
  area: ["href"],
  audio: ["src"],
  base: ["href"],
  blockquote: ["cite"],
  body: ["background"],
  button: ["formaction"],
  command: ["icon"],
  del: ["cite"],
  embed: ["src"],
  form: ["action"],
  frame: ["longdesc", "src"],
  head: ["profile"],
  html: ["manifest"],
  iframe: ["longdesc", "src"],
  img: ["longdesc", "src", "usemap"],
  input: ["src", "usemap", "formaction"],
  ins: ["cite"],
  link: ["href"],
  object: ["classid", "codebase", "data", "usemap"],
  q: ["cite"],
  script: ["src"],
  source: ["src"],
  video: ["poster", "src"],
};

/** Elements whose content is text up to their end tag (no tags inside), as HTML tokenizers treat them. */
const RAW_TEXT = new Set(["iframe", "noembed", "noframes", "noscript", "script", "style", "textarea", "title", "xmp"]);

/** A start tag longer than this is passed on as it is rather than held further. */
const MAX_TAG = 256 * 1024;

export interface UrlRewriteContext {
  /** The proxy path in front of the backend's paths: `/api/v1/namespaces/NS/pods/NAME/proxy`. */
  prefix: string;
  /** The backend's host[:port] as the request to it named it (and, for a default port, also without it). */
  backendHosts: readonly string[];
  /** The Host header the client sent to the API server. */
  requestHost: string | undefined;
}

/**
 * One URL through the proxy (upstream's rewriteURL, for an API server that
 * was addressed by path): unchanged unless it is an absolute path, or names
 * the backend's or the API server's host; then the proxy prefix goes in
 * front of the path (not twice), keeping query and fragment, and the scheme
 * and host go unless they were the API server's.
 */
export function rewriteUrl(target: string, c: UrlRewriteContext): string {
  // What URL parsers refuse: control characters and spaces in a URL.
  if (/[\x00-\x20\x7f]/.test(target)) return target;
  let rest = target;
  let scheme = "";
  const s = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (s) {
    scheme = s[0];
    rest = rest.slice(scheme.length);
  }
  let authority = "";
  let host = "";
  if (rest.startsWith("//")) {
    const end = rest.slice(2).search(/[/?#]/);
    authority = end < 0 ? rest : rest.slice(0, end + 2);
    rest = rest.slice(authority.length);
    host = authority.slice(2).replace(/^.*@/, "");
  }
  const tail = rest.search(/[?#]/);
  const path = tail < 0 ? rest : rest.slice(0, tail);
  const after = tail < 0 ? "" : rest.slice(tail);
  const differentHost = host !== "" && !c.backendHosts.includes(host) && host !== c.requestHost;
  if (differentHost || !path.startsWith("/")) return target;
  // The API server's own address, as the client wrote it, stays; the backend's goes.
  const origin = host !== "" && host === c.requestHost ? `${scheme}${authority}` : "";
  if (path.startsWith(c.prefix)) return `${origin}${path}${after}`;
  let joined = posix.join(c.prefix, path);
  if (path.endsWith("/") && !joined.endsWith("/")) joined += "/";
  return `${origin}${joined}${after}`;
}

const NAMED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", sol: "/", colon: ":", num: "#", quest: "?", period: "." };

/** Character references in an attribute value (latin1 string in, latin1 string out: non-latin1 code points as their UTF-8 bytes). */
function unescapeAttribute(raw: string): string {
  if (!raw.includes("&")) return raw;
  return raw.replace(/&(?:#[xX]([0-9a-fA-F]+)|#(\d+)|([a-zA-Z]+));?/g, (whole, hex?: string, dec?: string, name?: string) => {
    if (name !== undefined) return NAMED[name] ?? whole;
    const cp = hex !== undefined ? parseInt(hex, 16) : Number(dec);
    if (!Number.isInteger(cp) || cp <= 0 || cp > 0x10ffff) return whole;
    return Buffer.from(String.fromCodePoint(cp), "utf8").toString("latin1");
  });
}

const escapeAttribute = (v: string) => v.replace(/[&'<>"]/g, (ch) => ({ "&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", '"': "&#34;" })[ch]!);

const isSpace = (ch: string | undefined) => ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || ch === "\f";

interface ScannedTag {
  /** Index just after the closing ">". */
  end: number;
  name: string;
  /** Attribute names (lower case) and where their values are in the text, quotes included. */
  attributes: { name: string; from: number; to: number; value: string }[];
}

/** The start tag at `text[at]` ("<" and a letter), or undefined when the text ends inside it. */
function scanStartTag(text: string, at: number): ScannedTag | undefined {
  let i = at + 1;
  while (i < text.length && !isSpace(text[i]) && text[i] !== "/" && text[i] !== ">") i++;
  const name = text.slice(at + 1, i).toLowerCase();
  const attributes: ScannedTag["attributes"] = [];
  for (;;) {
    while (i < text.length && (isSpace(text[i]) || text[i] === "/")) i++;
    if (i >= text.length) return undefined;
    if (text[i] === ">") return { end: i + 1, name, attributes };
    const nameStart = i;
    i++; // the first character belongs to the name even when it is "="
    while (i < text.length && !isSpace(text[i]) && text[i] !== "/" && text[i] !== ">" && text[i] !== "=") i++;
    const attribute = text.slice(nameStart, i).toLowerCase();
    while (i < text.length && isSpace(text[i])) i++;
    if (i >= text.length) return undefined;
    if (text[i] !== "=") continue;
    i++;
    while (i < text.length && isSpace(text[i])) i++;
    if (i >= text.length) return undefined;
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const close = text.indexOf(quote, i + 1);
      if (close < 0) return undefined;
      attributes.push({ name: attribute, from: i, to: close + 1, value: text.slice(i + 1, close) });
      i = close + 1;
    } else {
      const from = i;
      while (i < text.length && !isSpace(text[i]) && text[i] !== ">") i++;
      if (i >= text.length) return undefined;
      attributes.push({ name: attribute, from, to: i, value: text.slice(from, i) });
    }
  }
}

/** The tag's text with its URL-valued attributes rewritten (the rest of it byte for byte). */
function rewriteTag(text: string, at: number, tag: ScannedTag, rewrite: (url: string) => string): string {
  const wanted = URL_ATTRIBUTES[tag.name];
  if (wanted === undefined) return text.slice(at, tag.end);
  let out = "";
  let copied = at;
  for (const a of tag.attributes) {
    if (!wanted.includes(a.name)) continue;
    const value = unescapeAttribute(a.value);
    const next = rewrite(value);
    if (next === value) continue;
    out += `${text.slice(copied, a.from)}"${escapeAttribute(next)}"`;
    copied = a.to;
  }
  return out + text.slice(copied, tag.end);
}

/** A Transform that rewrites the URL-valued attributes of an HTML byte stream. */
export class HtmlLinkRewriter extends Transform {
  readonly #rewrite: (url: string) => string;
  /** Input not yet passed on (an unfinished tag, comment or end-tag search), latin1. */
  #pending = "";
  /** Inside a raw-text element: the end tag that closes it ("</script"), or "*" for plaintext (to the end). */
  #rawUntil: string | undefined;

  constructor(rewrite: (url: string) => string) {
    super();
    this.#rewrite = rewrite;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#pending += chunk.toString("latin1");
    const out = this.#consume(false);
    if (out !== "") this.push(Buffer.from(out, "latin1"));
    done();
  }

  override _flush(done: TransformCallback): void {
    const out = this.#consume(true) + this.#pending;
    this.#pending = "";
    if (out !== "") this.push(Buffer.from(out, "latin1"));
    done();
  }

  /** Passes on what is complete; keeps in #pending what needs more input (at the end, everything goes). */
  #consume(final: boolean): string {
    const text = this.#pending;
    let out = "";
    let i = 0;
    const hold = (from: number) => {
      // An unfinished construct waits for more input, up to a bound; at the end it is passed on as it is.
      if (!final && text.length - from <= MAX_TAG) return true;
      return false;
    };
    while (i < text.length) {
      if (this.#rawUntil !== undefined) {
        if (this.#rawUntil === "*") {
          out += text.slice(i);
          i = text.length;
          break;
        }
        const close = text.toLowerCase().indexOf(this.#rawUntil, i);
        if (close < 0) {
          // Keep the last few characters: the end tag may be split across chunks.
          const keep = final ? text.length : Math.max(i, text.length - this.#rawUntil.length);
          out += text.slice(i, keep);
          i = keep;
          break;
        }
        out += text.slice(i, close);
        i = close;
        this.#rawUntil = undefined;
        continue;
      }
      const lt = text.indexOf("<", i);
      if (lt < 0) {
        out += text.slice(i);
        i = text.length;
        break;
      }
      out += text.slice(i, lt);
      i = lt;
      if (i + 1 >= text.length) {
        if (hold(i)) break;
        out += text.slice(i);
        i = text.length;
        break;
      }
      const next = text[i + 1]!;
      let end: number;
      if (text.startsWith("<!--", i) || (text.length - i < 4 && "<!--".startsWith(text.slice(i)))) {
        const close = text.indexOf("-->", i + 4);
        end = close < 0 ? -1 : close + 3;
      } else if (next === "!" || next === "?" || next === "/") {
        const close = text.indexOf(">", i + 2);
        end = close < 0 ? -1 : close + 1;
      } else if (/[a-zA-Z]/.test(next)) {
        const tag = scanStartTag(text, i);
        if (tag !== undefined) {
          out += rewriteTag(text, i, tag, this.#rewrite);
          i = tag.end;
          const selfClosing = text[tag.end - 2] === "/";
          if (tag.name === "plaintext") this.#rawUntil = "*";
          else if (RAW_TEXT.has(tag.name) && !selfClosing) this.#rawUntil = `</${tag.name}`;
          continue;
        }
        end = -1;
      } else {
        // A "<" that starts nothing is text.
        out += "<";
        i++;
        continue;
      }
      if (end < 0) {
        if (hold(i)) break;
        out += text.slice(i);
        i = text.length;
        break;
      }
      out += text.slice(i, end);
      i = end;
    }
    this.#pending = text.slice(i);
    return out;
  }
}

/**
 * A Transform made of inner ones piped in a row, built from the first chunk
 * it sees (none at all for an empty stream): what the first is written comes
 * out of the last.
 */
class Chain extends Transform {
  readonly #make: (first: Buffer) => Transform[];
  #head: Transform | undefined;
  #tail: Transform | undefined;

  constructor(make: (first: Buffer) => Transform[]) {
    super();
    this.#make = make;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.#head === undefined) {
      const parts = this.#make(chunk);
      for (let i = 0; i < parts.length; i++) {
        parts[i]!.on("error", (err) => this.destroy(err));
        if (i > 0) parts[i - 1]!.pipe(parts[i]!);
      }
      this.#head = parts[0]!;
      this.#tail = parts.at(-1)!;
      this.#tail.on("data", (d: Buffer) => this.push(d));
    }
    this.#head.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (this.#head === undefined) return done();
    this.#tail!.once("end", () => done());
    this.#head.end();
  }
}

/** A zlib stream starts with CMF (method 8, window ≤ 32K) and FLG such that CMF·256+FLG is a multiple of 31. */
const zlibWrapped = (b: Buffer) => (b[0]! & 0x0f) === 8 && b[0]! >> 4 <= 7 && (b.length < 2 || (b[0]! * 256 + b[1]!) % 31 === 0);

/**
 * The body rewriter for an HTML answer with this Content-Encoding: decoded,
 * links rewritten, encoded the same way; undefined for an encoding we do not
 * read (the body then passes through unchanged, as upstream's).
 */
export function htmlBodyRewriter(encoding: string | undefined, rewrite: (url: string) => string): Transform | undefined {
  const e = (encoding ?? "").trim().toLowerCase();
  const links = new HtmlLinkRewriter(rewrite);
  if (e === "" || e === "identity") return links;
  if (e === "gzip" || e === "x-gzip") return new Chain(() => [createGunzip(), links, createGzip()]);
  // "deflate" is zlib-wrapped by the standard, raw by some servers (Go's among them): the first bytes tell, and the answer keeps the form.
  if (e === "deflate") return new Chain((first) => (zlibWrapped(first) ? [createInflate(), links, createDeflate()] : [createInflateRaw(), links, createDeflateRaw()]));
  return undefined;
}

/** Whether a Content-Type is HTML (its media type, parameters aside). */
export function isHtml(contentType: string | string[] | undefined): boolean {
  const v = Array.isArray(contentType) ? contentType[0] : contentType;
  return (v ?? "").split(";")[0]!.trim().toLowerCase() === "text/html";
}

/** CORS headers of a backend's answer, which the proxy does not pass on (upstream's list). */
export const CORS_HEADERS = new Set(["access-control-allow-credentials", "access-control-allow-headers", "access-control-allow-methods", "access-control-allow-origin"]);
