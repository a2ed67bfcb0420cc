// Accept-header matching for the component endpoints (/metrics, z-pages),
// over the parser the API server negotiates with (src/machinery/negotiation.ts): media
// ranges ordered by q, stable for equal q; an absent header reads as */*.

import { parseAccept, type MediaRange } from "../machinery/negotiation.js";

export { parseAccept, type MediaRange };

/** "application/json" for a range's type and subtype (lower case). */
export function mediaType(range: MediaRange): string {
  return `${range.type}/${range.subtype}`;
}

/** Whether the range admits `type` ("text/plain" is admitted by text/plain, text/* and *\/*). */
export function admits(range: MediaRange, type: string): boolean {
  if (range.type === "*" && range.subtype === "*") return true;
  const [t, s] = type.split("/");
  return range.type === t && (range.subtype === "*" || range.subtype === s);
}
