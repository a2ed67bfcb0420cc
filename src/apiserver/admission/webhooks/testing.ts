// Test helpers shared by the webhook and policy tests: the plugins read the
// watch cache, so a request right after a configuration is written may race it.

import type { TestResponse, TestServer } from "../../testing/harness.js";

/** POST `body` to `path`, retrying (deleting what got created) until `done` holds or about two seconds pass. */
export async function createUntil(t: TestServer, path: string, body: { metadata: { name: string } }, done: (r: TestResponse) => boolean): Promise<TestResponse> {
  let r = await t.request("POST", path, { body });
  for (let i = 0; i < 50 && !done(r); i++) {
    if (r.status === 201) await t.request("DELETE", `${path}/${body.metadata.name}`);
    await new Promise((res) => setTimeout(res, 40));
    r = await t.request("POST", path, { body });
  }
  return r;
}

/** The texts of a response's Warning headers. */
export function warnings(r: { headers: Record<string, unknown> }): string[] {
  const h = r.headers["warning"];
  const all = h === undefined ? [] : Array.isArray(h) ? h : String(h).split(/,(?=\s*299 )/);
  return all.map((w) => String(w).trim().replace(/^299 - "/, "").replace(/"$/, ""));
}
