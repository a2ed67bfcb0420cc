// A watch's answer as the caller iterates it: newline-delimited JSON events
// from one HTTP/2 stream (seed 000, "Watch behavior"). An ERROR event throws
// the server's Status; closing or aborting our own watch ends iteration quietly.

import { constants, type ClientHttp2Stream } from "node:http2";
import { ApiError, buildStatus, isStatusObject, type ApiObject } from "../../machinery/index.js";
import { ensureComplete } from "./response.js";
import type { Watch, WatchEvent } from "./types.js";

/** Newline-delimited watch events from one HTTP/2 stream. */
export class EventStream<T extends ApiObject> implements Watch<T> {
  readonly #stream: ClientHttp2Stream;
  readonly #signal: AbortSignal | undefined;
  #closed = false;

  constructor(stream: ClientHttp2Stream, signal: AbortSignal | undefined) {
    this.#stream = stream;
    this.#signal = signal;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stream.close(constants.NGHTTP2_CANCEL);
    this.#stream.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    let buffer = "";
    const decoder = new TextDecoder();
    const parse = (line: string): WatchEvent<T> => {
      let event: { type?: string; object?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch (err) {
        throw new Error(`watch: an event that is not JSON: ${line.slice(0, 200)}`, { cause: err });
      }
      if (event.type === "ERROR") {
        throw isStatusObject(event.object) ? new ApiError(event.object) : new ApiError(buildStatus({ code: 500, reason: "InternalError", message: JSON.stringify(event.object) }));
      }
      if (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED" && event.type !== "BOOKMARK") {
        throw new Error(`watch: unknown event type ${JSON.stringify(event.type)}`);
      }
      return { type: event.type, object: event.object as T };
    };
    try {
      for await (const chunk of this.#stream) {
        buffer += decoder.decode(chunk as Buffer, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line !== "") yield parse(line);
        }
      }
      ensureComplete(this.#stream);
      const rest = (buffer + decoder.decode()).trim();
      if (rest !== "") yield parse(rest);
    } catch (err) {
      // Closing or aborting our own watch is not an error.
      if (this.#closed || this.#signal?.aborted) return;
      throw err;
    } finally {
      this.close();
    }
  }
}
