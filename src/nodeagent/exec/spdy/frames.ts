// SPDY/3.1 framing (the SPDY/3.1 draft; what Kubernetes' streaming clients
// speak as `Upgrade: SPDY/3.1`): an 8-byte frame header, then the payload.
// A control frame starts with a 1 bit, the version (3) and its type; a data
// frame with a 0 bit and its stream's id. Header blocks (SYN_STREAM,
// SYN_REPLY, HEADERS) are a count and length-prefixed name/value pairs,
// compressed with zlib preset with SPDY/3's dictionary; each direction of a
// connection keeps one zlib context for its whole life, flushed (SYNC) after
// every block (zlib's stream API: so compressing and inflating are
// asynchronous, and the session keeps frames in order). Parsing is incremental (FrameReader) and strict: whatever
// cannot be a frame of SPDY/3.1 is a SpdyProtocolError, which the connection
// answers with GOAWAY.

import { constants, createDeflate, createInflate, type Deflate, type Inflate } from "node:zlib";
import { SPDY3_DICTIONARY } from "./dictionary.js";

export const SPDY_VERSION = 3;

export const enum FrameType {
  SynStream = 1,
  SynReply = 2,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  GoAway = 7,
  Headers = 8,
  WindowUpdate = 9,
}

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes. */
export const enum RstStatus {
  ProtocolError = 1,
  InvalidStream = 2,
  RefusedStream = 3,
  UnsupportedVersion = 4,
  Cancel = 5,
  InternalError = 6,
  FlowControlError = 7,
  StreamInUse = 8,
  StreamAlreadyClosed = 9,
  FrameTooLarge = 11,
}

/** GOAWAY status codes. */
export const enum GoAwayStatus {
  Ok = 0,
  ProtocolError = 1,
  InternalError = 2,
}

/** SETTINGS ids this implementation reads. */
export const SETTINGS_INITIAL_WINDOW_SIZE = 7;

/** The initial flow-control window of a stream and of a connection (SPDY/3.1). */
export const INITIAL_WINDOW = 64 * 1024;

/** Limits: a control frame's payload, a header block once inflated, and the pairs in it. */
export const MAX_CONTROL_LENGTH = 64 * 1024;
export const MAX_HEADER_BYTES = 256 * 1024;
export const MAX_HEADER_PAIRS = 256;
/** The largest data frame accepted (the framing allows 16 MiB; no client sends more than 32 KiB). */
export const MAX_DATA_LENGTH = 1024 * 1024;

export type HeaderList = [name: string, value: string][];

export type Frame =
  | { type: "data"; streamId: number; flags: number; data: Buffer }
  | { type: "syn_stream"; streamId: number; associatedId: number; priority: number; flags: number; block: Buffer }
  | { type: "syn_reply"; streamId: number; flags: number; block: Buffer }
  | { type: "rst_stream"; streamId: number; status: number }
  | { type: "settings"; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { type: "ping"; id: number }
  | { type: "goaway"; lastGoodStreamId: number; status: number }
  | { type: "headers"; streamId: number; flags: number; block: Buffer }
  | { type: "window_update"; streamId: number; delta: number };

export class SpdyProtocolError extends Error {}

/** Runs `input` through a long-lived zlib context and a SYNC flush; callers never overlap (one queue per direction). */
function syncFlush(z: Deflate | Inflate, input: Buffer, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      parts.push(c);
      size += c.length;
    };
    const onError = (e: Error) => {
      z.off("data", onData);
      reject(e);
    };
    z.on("data", onData);
    z.once("error", onError);
    z.write(input);
    z.flush(constants.Z_SYNC_FLUSH, () => {
      z.off("data", onData);
      z.off("error", onError);
      if (size > limit) reject(new Error(`more than ${limit} bytes`));
      else resolve(Buffer.concat(parts));
    });
  });
}

/** One direction's header compression context. */
export class HeaderCompressor {
  readonly #z: Deflate = createDeflate({ dictionary: SPDY3_DICTIONARY });

  compress(headers: HeaderList): Promise<Buffer> {
    return syncFlush(this.#z, encodeHeaderBlock(headers), Infinity);
  }

  close(): void {
    this.#z.close();
  }
}

/** The other direction's decompression context. */
export class HeaderDecompressor {
  readonly #z: Inflate = createInflate({ dictionary: SPDY3_DICTIONARY });

  async decompress(block: Buffer): Promise<HeaderList> {
    let raw: Buffer;
    try {
      raw = await syncFlush(this.#z, block, MAX_HEADER_BYTES);
    } catch (err) {
      throw new SpdyProtocolError(`header block does not inflate: ${(err as Error).message}`);
    }
    return decodeHeaderBlock(raw);
  }

  close(): void {
    this.#z.close();
  }
}

/** The uncompressed block: a 32-bit count, then each name and value with a 32-bit length. Names go lower case. */
export function encodeHeaderBlock(headers: HeaderList): Buffer {
  const parts: Buffer[] = [u32(headers.length)];
  for (const [name, value] of headers) {
    const n = Buffer.from(name.toLowerCase());
    const v = Buffer.from(value);
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(raw: Buffer): HeaderList {
  if (raw.length < 4) throw new SpdyProtocolError("header block shorter than its count");
  const count = raw.readUInt32BE(0);
  if (count > MAX_HEADER_PAIRS) throw new SpdyProtocolError(`header block of ${count} pairs (at most ${MAX_HEADER_PAIRS})`);
  const out: HeaderList = [];
  let at = 4;
  const field = (what: string): string => {
    if (at + 4 > raw.length) throw new SpdyProtocolError(`header block ends inside a ${what} length`);
    const len = raw.readUInt32BE(at);
    at += 4;
    if (at + len > raw.length) throw new SpdyProtocolError(`header ${what} of ${len} bytes runs past the block`);
    const s = raw.toString("utf8", at, at + len);
    at += len;
    return s;
  };
  for (let i = 0; i < count; i++) {
    const name = field("name");
    if (name === "" || name !== name.toLowerCase()) throw new SpdyProtocolError(`invalid header name ${JSON.stringify(name)}`);
    out.push([name, field("value")]);
  }
  if (at !== raw.length) throw new SpdyProtocolError("bytes after the header block's last pair");
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function controlFrame(type: FrameType, flags: number, payload: Buffer): Buffer {
  const head = Buffer.allocUnsafe(8);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

export function dataFrame(streamId: number, data: Buffer, fin = false): Buffer {
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4);
  return data.length === 0 ? head : Buffer.concat([head, data]);
}

export async function synStreamFrame(z: HeaderCompressor, streamId: number, headers: HeaderList, flags = 0, associatedId = 0, priority = 0): Promise<Buffer> {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt32BE(streamId & 0x7fffffff, 0);
  fixed.writeUInt32BE(associatedId & 0x7fffffff, 4);
  fixed[8] = (priority & 7) << 5;
  return controlFrame(FrameType.SynStream, flags, Buffer.concat([fixed, await z.compress(headers)]));
}

export async function synReplyFrame(z: HeaderCompressor, streamId: number, headers: HeaderList, flags = 0): Promise<Buffer> {
  return controlFrame(FrameType.SynReply, flags, Buffer.concat([u32(streamId & 0x7fffffff), await z.compress(headers)]));
}

export async function headersFrame(z: HeaderCompressor, streamId: number, headers: HeaderList, flags = 0): Promise<Buffer> {
  return controlFrame(FrameType.Headers, flags, Buffer.concat([u32(streamId & 0x7fffffff), await z.compress(headers)]));
}

export function rstStreamFrame(streamId: number, status: number): Buffer {
  return controlFrame(FrameType.RstStream, 0, Buffer.concat([u32(streamId & 0x7fffffff), u32(status)]));
}

export function settingsFrame(entries: { flags?: number; id: number; value: number }[], flags = 0): Buffer {
  const parts = [u32(entries.length)];
  for (const e of entries) parts.push(u32((((e.flags ?? 0) & 0xff) << 24) | (e.id & 0xffffff)), u32(e.value));
  return controlFrame(FrameType.Settings, flags, Buffer.concat(parts));
}

export function pingFrame(id: number): Buffer {
  return controlFrame(FrameType.Ping, 0, u32(id));
}

export function goAwayFrame(lastGoodStreamId: number, status: number): Buffer {
  return controlFrame(FrameType.GoAway, 0, Buffer.concat([u32(lastGoodStreamId & 0x7fffffff), u32(status)]));
}

export function windowUpdateFrame(streamId: number, delta: number): Buffer {
  return controlFrame(FrameType.WindowUpdate, 0, Buffer.concat([u32(streamId & 0x7fffffff), u32(delta & 0x7fffffff)]));
}

/** Cuts frames out of a byte stream as it arrives; header blocks stay compressed (the caller inflates them in order). */
export class FrameReader {
  #buffer: Buffer = Buffer.alloc(0);

  /** The frames complete once `chunk` is added; throws SpdyProtocolError on the first that cannot be one. */
  push(chunk: Buffer): Frame[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const frames: Frame[] = [];
    while (this.#buffer.length >= 8) {
      const b = this.#buffer;
      const control = (b[0]! & 0x80) !== 0;
      const flags = b[4]!;
      const length = b.readUInt32BE(4) & 0xffffff;
      if (control && length > MAX_CONTROL_LENGTH) throw new SpdyProtocolError(`control frame of ${length} bytes (at most ${MAX_CONTROL_LENGTH})`);
      if (!control && length > MAX_DATA_LENGTH) throw new SpdyProtocolError(`data frame of ${length} bytes (at most ${MAX_DATA_LENGTH})`);
      if (control) {
        const version = b.readUInt16BE(0) & 0x7fff;
        if (version !== SPDY_VERSION) throw new SpdyProtocolError(`control frame of SPDY version ${version}`);
      }
      if (b.length < 8 + length) break;
      const payload = b.subarray(8, 8 + length);
      this.#buffer = b.subarray(8 + length);
      if (!control) frames.push({ type: "data", streamId: b.readUInt32BE(0) & 0x7fffffff, flags, data: Buffer.from(payload) });
      else frames.push(this.#control(b.readUInt16BE(2), flags, payload));
    }
    return frames;
  }

  #control(type: number, flags: number, p: Buffer): Frame {
    const need = (n: number, name: string) => {
      if (p.length < n) throw new SpdyProtocolError(`${name} frame of ${p.length} bytes (at least ${n})`);
    };
    const exact = (n: number, name: string) => {
      if (p.length !== n) throw new SpdyProtocolError(`${name} frame of ${p.length} bytes (${n} expected)`);
    };
    const id = (at: number) => p.readUInt32BE(at) & 0x7fffffff;
    switch (type) {
      case FrameType.SynStream:
        need(10, "SYN_STREAM");
        return { type: "syn_stream", streamId: id(0), associatedId: id(4), priority: p[8]! >> 5, flags, block: Buffer.from(p.subarray(10)) };
      case FrameType.SynReply:
        need(4, "SYN_REPLY");
        return { type: "syn_reply", streamId: id(0), flags, block: Buffer.from(p.subarray(4)) };
      case FrameType.Headers:
        need(4, "HEADERS");
        return { type: "headers", streamId: id(0), flags, block: Buffer.from(p.subarray(4)) };
      case FrameType.RstStream:
        exact(8, "RST_STREAM");
        return { type: "rst_stream", streamId: id(0), status: p.readUInt32BE(4) };
      case FrameType.Settings: {
        need(4, "SETTINGS");
        const count = p.readUInt32BE(0);
        if (p.length !== 4 + 8 * count) throw new SpdyProtocolError(`SETTINGS frame of ${p.length} bytes for ${count} entries`);
        const entries = [];
        for (let i = 0; i < count; i++) {
          const at = 4 + 8 * i;
          entries.push({ flags: p[at]!, id: p.readUInt32BE(at) & 0xffffff, value: p.readUInt32BE(at + 4) });
        }
        return { type: "settings", flags, entries };
      }
      case FrameType.Ping:
        exact(4, "PING");
        return { type: "ping", id: p.readUInt32BE(0) };
      case FrameType.GoAway:
        exact(8, "GOAWAY");
        return { type: "goaway", lastGoodStreamId: id(0), status: p.readUInt32BE(4) };
      case FrameType.WindowUpdate:
        exact(8, "WINDOW_UPDATE");
        return { type: "window_update", streamId: id(0), delta: p.readUInt32BE(4) & 0x7fffffff };
      default:
        // SPDY/3 would skip it; upstream's framer (and so every Kubernetes peer) fails the connection: so do we.
        throw new SpdyProtocolError(`unknown control frame type ${type}`);
    }
  }
}
