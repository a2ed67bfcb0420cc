// OpenAPI (KUBECTL.md, "OpenAPI"): /openapi/v2, the one Swagger 2.0 document
// (JSON, or gnostic's Protobuf message that kubectl 1.27 and 1.28 ask for
// first), and /openapi/v3, an index of one document per group-version. Both
// are drawn from one model of the registry (openapi/model.ts), built on first
// request and kept, with their bytes, gzip form and ETag, until invalidate()
// (the registry changed, e.g. a CRD was added). A GET with a matching
// If-None-Match is answered 304.

import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { methodNotSupported, notAcceptable, pathNotFound } from "../../machinery/index.js";
import { parseAccept } from "../../machinery/negotiation.js";
import { codecFor } from "../../machinery/codec/protobuf/index.js";
import { OPENAPI_V2_DOCUMENT, openApiV2Types } from "../../machinery/codec/protobuf/openapi-v2.js";
import type { ApiRegistry } from "../api-registry.js";
import { acceptsGzip } from "../http/response-body.js";
import type { Incoming, Outgoing } from "../http/exchange.js";
import { buildModel, type Json } from "./openapi/model.js";
import { toGnostic, v2Document } from "./openapi/v2.js";
import { v3Document } from "./openapi/v3.js";

/**
 * The Protobuf form's Content-Type: spelled with a dot, as upstream answers,
 * because Go's mime parser rejects the `@` of the spelling clients ask for.
 */
export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/** The Accept spellings of the Protobuf form (kubectl asks with `@`). */
const OPENAPI_V2_PROTOBUF_TYPES = ["application/com.github.proto-openapi.spec.v2@v1.0+protobuf", OPENAPI_V2_PROTOBUF, "application/vnd.kubernetes.protobuf"];
const JSON_TYPE = "application/json";
/** Bodies smaller than this go out plain. */
const GZIP_MIN_BYTES = 1024;

/** One representation of one document: its bytes, made once. */
class Rendered {
  readonly bytes: Buffer;
  readonly etag: string;
  readonly hash: string;
  #gzip: Buffer | undefined;

  constructor(
    bytes: Buffer,
    readonly contentType: string,
  ) {
    this.bytes = bytes;
    this.hash = createHash("sha512").update(bytes).digest("hex").slice(0, 64).toUpperCase();
    this.etag = `"${this.hash}"`;
  }

  get gzip(): Buffer {
    return (this.#gzip ??= gzipSync(this.bytes));
  }
}

interface Built {
  readonly v2: { json: Rendered; doc: Json };
  readonly v3Index: Rendered;
  readonly v3: ReadonlyMap<string, Rendered>;
}

export class OpenApi {
  readonly #registry: ApiRegistry;
  #built: Built | undefined;
  #v2Protobuf: Rendered | undefined;

  constructor(registry: ApiRegistry) {
    this.#registry = registry;
  }

  /** Drop the documents: the next request builds them again from the registry. */
  invalidate(): void {
    this.#built = undefined;
    this.#v2Protobuf = undefined;
  }

  /** True for the paths this class answers. */
  handles(path: string): boolean {
    return path === "/openapi/v2" || path === "/openapi/v3" || path.startsWith("/openapi/v3/");
  }

  /** The JSON document for a request path, or undefined (404). */
  answer(path: string): Json | undefined {
    const rendered = this.#rendered(path, JSON_TYPE);
    return rendered === undefined ? undefined : (JSON.parse(rendered.bytes.toString()) as Json);
  }

  /** Answers a request for one of the paths `handles` accepts; throws the ApiError to send otherwise. */
  serve(req: Incoming, res: Outgoing, path: string, options: { gzip: boolean }): void {
    if (req.method !== "GET" && req.method !== "HEAD") throw methodNotSupported({ group: "", resource: "openapi" }, req.method ?? "");
    const accept = req.headers.accept;
    let contentType = JSON_TYPE;
    if (path === "/openapi/v2") {
      const picked = pickV2(accept);
      if (picked === undefined) throw notAcceptable([JSON_TYPE, OPENAPI_V2_PROTOBUF]);
      contentType = picked;
    } else if (!acceptsJson(accept)) {
      throw notAcceptable([JSON_TYPE]);
    }
    const rendered = this.#rendered(path, contentType);
    if (rendered === undefined) throw pathNotFound();
    const headers: Record<string, string | number> = { "Content-Type": rendered.contentType, ETag: rendered.etag, Vary: "Accept, Accept-Encoding" };
    if (path.startsWith("/openapi/v3/")) headers["Cache-Control"] = "public, immutable";
    if (matches(req.headers["if-none-match"], rendered.etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    let body = rendered.bytes;
    if (options.gzip && body.length >= GZIP_MIN_BYTES && acceptsGzip(req)) {
      body = rendered.gzip;
      headers["Content-Encoding"] = "gzip";
    }
    headers["Content-Length"] = body.length;
    res.writeHead(200, headers);
    if (req.method === "HEAD") res.end();
    else res.end(body);
  }

  #rendered(path: string, contentType: string): Rendered | undefined {
    const built = this.#build();
    if (path === "/openapi/v2") return contentType === JSON_TYPE ? built.v2.json : this.#protobuf(built);
    if (path === "/openapi/v3") return built.v3Index;
    if (path.startsWith("/openapi/v3/")) return built.v3.get(path.slice("/openapi/v3/".length));
    return undefined;
  }

  /** The Protobuf form is made on first request: only kubectl 1.27 and 1.28 ask for it. */
  #protobuf(built: Built): Rendered {
    if (this.#v2Protobuf === undefined) {
      const bytes = codecFor(openApiV2Types()).encode(toGnostic(built.v2.doc), OPENAPI_V2_DOCUMENT);
      this.#v2Protobuf = new Rendered(Buffer.from(bytes), OPENAPI_V2_PROTOBUF);
    }
    return this.#v2Protobuf;
  }

  #build(): Built {
    if (this.#built !== undefined) return this.#built;
    const model = buildModel(this.#registry);
    const v3 = new Map<string, Rendered>();
    const paths: Json = {};
    for (const gv of model) {
      const rendered = new Rendered(Buffer.from(JSON.stringify(v3Document(gv))), JSON_TYPE);
      v3.set(gv.key, rendered);
      paths[gv.key] = { serverRelativeURL: `/openapi/v3/${gv.key}?hash=${rendered.hash}` };
    }
    const doc = v2Document(model);
    this.#built = {
      v2: { json: new Rendered(Buffer.from(JSON.stringify(doc)), JSON_TYPE), doc },
      v3Index: new Rendered(Buffer.from(JSON.stringify({ paths })), JSON_TYPE),
      v3,
    };
    return this.#built;
  }
}

/** JSON or gnostic Protobuf, in the client's order of preference; undefined when neither is acceptable. */
function pickV2(accept: string | undefined): string | undefined {
  for (const range of parseAccept(accept)) {
    const type = `${range.type}/${range.subtype}`;
    if (OPENAPI_V2_PROTOBUF_TYPES.includes(type)) return OPENAPI_V2_PROTOBUF;
    if (type === JSON_TYPE || type === "*/*" || type === "application/*") return JSON_TYPE;
  }
  return undefined;
}

function acceptsJson(accept: string | undefined): boolean {
  return parseAccept(accept).some((r) => r.subtype === "*" && (r.type === "*" || r.type === "application") || `${r.type}/${r.subtype}` === JSON_TYPE);
}

function matches(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const value = Array.isArray(ifNoneMatch) ? ifNoneMatch.join(",") : ifNoneMatch;
  return value.split(",").some((tag) => {
    const t = tag.trim().replace(/^W\//, "");
    return t === "*" || t === etag;
  });
}
