import { test } from "node:test";
import assert from "node:assert/strict";
import { isApiError } from "../../machinery/index.js";
import { managerFromUserAgent, parseDryRun, setWarnings, writeOptions } from "./write-options.js";

const q = (s: string) => new URLSearchParams(s);

test("dryRun: All, or no value; anything else is a 400", () => {
  assert.equal(parseDryRun([]), false);
  assert.equal(parseDryRun([""]), false);
  assert.equal(parseDryRun(["All"]), true);
  assert.throws(() => parseDryRun(["All", "Some"]), (e: unknown) => isApiError(e, "BadRequest") && e.message === 'Invalid dry run value: "Some"; supported values: "All"');
});

test("fieldManager: given, or the User-Agent's product; checked as upstream", () => {
  assert.equal(writeOptions(q("fieldManager=x"), "kubectl/v1.33", "CreateOptions", "meta.k8s.io").fieldManager, "x");
  assert.equal(writeOptions(q(""), "kubectl/v1.33.0 (linux/amd64) kubernetes/abc", "CreateOptions", "meta.k8s.io").fieldManager, "kubectl");
  assert.equal(managerFromUserAgent("a\u0007b/1"), "ab");
  assert.equal(managerFromUserAgent("é".repeat(100)).length, 64, "at most 128 bytes");
  assert.throws(
    () => writeOptions(q(`fieldManager=${"m".repeat(129)}`), undefined, "UpdateOptions", "meta.k8s.io"),
    (e: unknown) => isApiError(e, "Invalid") && /^UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Too long/.test(e.message),
  );
  assert.throws(() => writeOptions(q("fieldManager=a%0Ab"), undefined, "CreateOptions", "meta.k8s.io"), (e: unknown) => isApiError(e, "Invalid") && /invalid character U\+000A/.test(e.message));
});

test("apply needs a fieldManager; force belongs to apply only", () => {
  assert.throws(() => writeOptions(q(""), "kubectl/1", "PatchOptions", "meta.k8s.io", "apply"), (e: unknown) => isApiError(e, "Invalid") && /fieldManager: Required value: is required for apply patch/.test(e.message));
  assert.throws(() => writeOptions(q("force=false"), undefined, "PatchOptions", "meta.k8s.io", "merge"), (e: unknown) => /force: Forbidden/.test((e as Error).message));
  assert.equal(writeOptions(q("fieldManager=a&force=true"), undefined, "PatchOptions", "meta.k8s.io", "apply").force, true);
  assert.equal(writeOptions(q("fieldManager=a&force=false"), undefined, "PatchOptions", "meta.k8s.io", "apply").force, false);
});

test("fieldValidation: default Warn, the three levels, anything else a 400 naming the options kind", () => {
  assert.equal(writeOptions(q(""), undefined, "CreateOptions", "meta.k8s.io").fieldValidation, "Warn");
  assert.equal(writeOptions(q("fieldValidation=Strict"), undefined, "CreateOptions", "meta.k8s.io").fieldValidation, "Strict");
  assert.throws(() => writeOptions(q("fieldValidation=strict"), undefined, "PatchOptions", "meta.k8s.io"), (e: unknown) => isApiError(e, "BadRequest") && /^PatchOptions.meta.k8s.io/.test(e.message));
});

test("setWarnings adds to the warnings already set, each text once", () => {
  const headers = new Map<string, unknown>();
  const res = { getHeader: (k: string) => headers.get(k), setHeader: (k: string, v: unknown) => void headers.set(k, v) } as unknown as Parameters<typeof setWarnings>[0];
  setWarnings(res, ['unknown field "x"']);
  setWarnings(res, ["would violate PodSecurity", 'unknown field "x"']);
  setWarnings(res, ["would violate PodSecurity"]);
  assert.deepEqual(headers.get("warning"), ['299 - "unknown field \\"x\\""', '299 - "would violate PodSecurity"']);
});
