// Talking to the API server from the page: every request carries the
// signed-in user's bearer token, so the server's authentication and RBAC
// apply to the dashboard exactly as to kubectl. Lists come as the API's Table
// representation (the kind's own columns); watches stream newline-delimited
// JSON events over fetch (no polling).

export class ApiError extends Error {
  constructor(readonly code: number, message: string, readonly status?: Status) {
    super(message);
  }
}

export interface Status {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: { causes?: { type?: string; message?: string; field?: string }[] };
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[];
  deletionTimestamp?: string;
  managedFields?: unknown[];
}

export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: { metadata: ObjectMeta };
}

export interface Table {
  kind: "Table";
  metadata: { resourceVersion?: string; continue?: string };
  columnDefinitions: TableColumn[];
  rows: TableRow[];
}

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

const TOKEN_KEY = "orch.dashboard.token";
let token: string | undefined = sessionStorage.getItem(TOKEN_KEY) ?? undefined;
const signedOutListeners = new Set<() => void>();

export function currentToken(): string | undefined {
  return token;
}

export function setToken(t: string | undefined): void {
  token = t;
  if (t === undefined) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, t);
}

export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export interface RequestOptions {
  method?: string;
  accept?: string;
  contentType?: string;
  body?: string;
  signal?: AbortSignal;
}

/** One API request with the user's token; a non-2xx answer throws ApiError with the server's Status message. */
export async function request(path: string, o: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: o.accept ?? "application/json" };
  if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
  if (o.contentType !== undefined) headers["content-type"] = o.contentType;
  const init: RequestInit = { method: o.method ?? "GET", headers, ...(o.body !== undefined ? { body: o.body } : {}), ...(o.signal ? { signal: o.signal } : {}), cache: "no-store" };
  const res = await fetchRetrying(path, init);
  if (res.ok) return res;
  const text = await res.text();
  let status: Status | undefined;
  try {
    status = JSON.parse(text) as Status;
  } catch {
    status = undefined;
  }
  if (res.status === 401 && token !== undefined) for (const l of signedOutListeners) l();
  throw new ApiError(res.status, status?.message ?? (text.trim() || `${res.status} ${res.statusText}`), status);
}

/**
 * fetch, tried again (up to 6 times, over about 4 s) when the browser drops the request before
 * any answer. Chromium ends every open connection when the host's network
 * interfaces change (net::ERR_NETWORK_CHANGED), and a node agent on the same
 * machine adds one for each pod it starts. Not for DELETE (a repeat would
 * answer 404 for a delete that happened).
 */
async function fetchRetrying(path: string, init: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(path, init);
    } catch (err) {
      if (!(err instanceof TypeError) || init.signal?.aborted || init.method === "DELETE" || attempt >= 6) throw err;
      await sleep(250 * attempt, init.signal ?? undefined);
    }
  }
}

/** A network failure (the connection dropped), as opposed to an answer of the server. */
export function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError;
}

export async function getJson<T>(path: string, o: RequestOptions = {}): Promise<T> {
  return (await request(path, o)).json() as Promise<T>;
}

/** The newline-delimited JSON events of a watch, until the server ends it or `signal` aborts. */
export async function* watchEvents<T>(path: string, o: RequestOptions): AsyncGenerator<WatchEvent<T>> {
  const res = await request(path, o);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line !== "") yield JSON.parse(line) as WatchEvent<T>;
      }
    }
  } finally {
    reader.releaseLock();
    void res.body?.cancel().catch(() => {});
  }
}

/** The text of a streaming response (logs with follow=true), chunk by chunk. */
export async function* textStream(path: string, signal: AbortSignal): AsyncGenerator<string> {
  const res = await request(path, { accept: "*/*", signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield decoder.decode(value, { stream: true });
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}
