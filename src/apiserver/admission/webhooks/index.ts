// Admission webhooks: two plugins of the chain, the mutating one last of the
// mutating steps and the validating one last of the validating steps (so the
// order is upstream's: built-in mutating → mutating webhooks → schema and kind
// validation → built-in validating → validating webhooks). Configurations are
// read from the watch cache on every request (no storage read), in name
// order; validating webhooks run in parallel, mutating ones in turn, each
// JSON patch applied before the next call, and IfNeeded webhooks called once
// more when a later webhook changed the object.

import type { AdmissionAttributes, MutatingPlugin, ValidatingPlugin } from "../../../api/admission.js";
import type { Webhook, WebhookConfiguration } from "../../../api/admissionregistration/index.js";
import { ApiError, badRequest, internalError, type ApiObject, type Labels } from "../../../machinery/index.js";
import { applyJsonPatch } from "../../../machinery/patch/index.js";
import { CallError, postReview, type ServiceResolver } from "./call.js";
import { conditionsMatch, namespaceMatches, objectMatches, ruleMatches } from "./matching.js";
import { reviewRequest, reviewResponse, type ReviewResponse } from "./review.js";
import type { Equivalence, ServedAs } from "./equivalent.js";

export { ruleMatches } from "./matching.js";
export type { ServiceResolver } from "./call.js";

export interface WebhookSources {
  /** The configurations as the watch cache has them. */
  mutating(): Promise<readonly WebhookConfiguration[]>;
  validating(): Promise<readonly WebhookConfiguration[]>;
  namespaceLabels(name: string): Promise<Labels | undefined>;
  resolveService: ServiceResolver;
  /** The version a resource is served at (the review's kind and resource versions). */
  versionOf(group: string, resource: string): string;
  /** The webhook configurations' own group: requests on it never go to webhooks (upstream exempts them). */
  readonly exemptGroup: string;
  /** Other versions and group names of a resource, for matchPolicy Equivalent. */
  readonly equivalence: Equivalence;
  /** Each call's time (apiserver_admission_webhook_admission_duration_seconds); `rejected` when it denied or failed. */
  readonly timed?: (call: { name: string; type: "admit" | "validate"; operation: string; rejected: boolean }, seconds: number) => void;
}

interface Matched {
  readonly hook: Webhook;
  /** Matched through an equivalent resource (matchPolicy Equivalent): the webhook sees the request as this. */
  readonly as?: ServedAs;
}

/**
 * How `hook`'s rules cover the request: `exact`, through an equivalent
 * group/version/resource (the first in serving order), or not at all.
 */
function ruleMatch(hook: Webhook, attrs: AdmissionAttributes, equivalents: () => readonly ServedAs[], version: string): { as?: ServedAs } | undefined {
  const rules = hook.rules ?? [];
  if (rules.some((r) => ruleMatches(r, attrs, version))) return {};
  if (hook.matchPolicy === "Exact") return undefined;
  for (const as of equivalents()) {
    if (as.group === attrs.resource.group && as.version === version) continue;
    const seen = { ...attrs, resource: { group: as.group, resource: as.resource } };
    if (rules.some((r) => ruleMatches(r, seen, as.version))) return { as };
  }
  return undefined;
}

const FAILED_OPEN_VALIDATING = "failed-open.validating.webhook.admission.k8s.io";
const FAILED_OPEN_MUTATING = "failed-open.mutating.webhook.admission.k8s.io";

function sorted(configs: readonly WebhookConfiguration[]): Webhook[] {
  return [...configs].sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "")).flatMap((c) => (Array.isArray(c.webhooks) ? c.webhooks : []));
}

/** The webhooks among `hooks` that this request goes to; a matchCondition error under failurePolicy Fail refuses the request. */
async function matching(hooks: readonly Webhook[], attrs: AdmissionAttributes, sources: WebhookSources, version: string): Promise<Matched[]> {
  const out: Matched[] = [];
  // The request's equivalent resources, looked up once and only when a webhook's rules miss it.
  let equivalents: readonly ServedAs[] | undefined;
  const lookup = () => (equivalents ??= sources.equivalence.equivalents(attrs.resource));
  for (const hook of hooks) {
    const matched = ruleMatch(hook, attrs, lookup, version);
    if (matched === undefined) continue;
    if (!(await namespaceMatches(hook, attrs, sources.namespaceLabels))) continue;
    if (!objectMatches(hook, attrs)) continue;
    const conditions = conditionsMatch(hook, () => ({
      object: attrs.object ?? null,
      oldObject: attrs.oldObject ?? null,
      request: reviewRequest(attrs, version).request,
    }));
    if (conditions.error !== undefined) {
      if ((hook.failurePolicy ?? "Fail") === "Fail") throw internalError(new Error(`failed calling webhook "${hook.name}": ${conditions.error}`));
      continue;
    }
    if (!conditions.match) continue;
    if (attrs.dryRun && hook.sideEffects !== "None" && hook.sideEffects !== "NoneOnDryRun") throw badRequest(`admission webhook "${hook.name}" does not support dry run`);
    out.push({ hook, ...matched });
  }
  return out;
}

/** upstream's ToStatusErr: the webhook's status with the denial text, never below 400. */
function denial(hook: Webhook, r: ReviewResponse): ApiError {
  const deniedBy = `admission webhook "${hook.name}" denied the request`;
  const s = r.status ?? {};
  const message = s.message ? `${deniedBy}: ${s.message}` : s.reason ? `${deniedBy}: ${s.reason}` : `${deniedBy} without explanation`;
  const code = typeof s.code === "number" && s.code >= 400 ? s.code : 400;
  return new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, ...(s.reason ? { reason: s.reason as never } : {}), code });
}

/**
 * Call one webhook with the request as it sees it (`seen`: seenBy's answer);
 * undefined when it failed open (failurePolicy Ignore), its response otherwise.
 */
async function call(matched: Matched, seen: AdmissionAttributes, sources: WebhookSources, version: string, failedOpenKey: string, index: number): Promise<ReviewResponse | undefined> {
  const { hook } = matched;
  const review = reviewRequest(seen, version, matched.as);
  const uid = review.request["uid"] as string;
  let response: ReviewResponse | string;
  const started = performance.now();
  try {
    response = reviewResponse(await postReview(hook.clientConfig ?? {}, review, hook.timeoutSeconds ?? 10, sources.resolveService), uid);
  } catch (err) {
    response = err instanceof CallError ? err.message : `failed to call webhook: ${(err as Error).message}`;
  }
  const seconds = (performance.now() - started) / 1000;
  seen.request?.calledOut?.(seconds);
  const type = failedOpenKey === FAILED_OPEN_MUTATING ? "admit" : "validate";
  sources.timed?.({ name: hook.name ?? "", type, operation: seen.operation, rejected: typeof response === "string" || !response.allowed }, seconds);
  if (typeof response === "string") {
    if ((hook.failurePolicy ?? "Fail") === "Ignore") {
      seen.request?.annotate(`${failedOpenKey}/round_0_index_${index}`, hook.name ?? "");
      return undefined;
    }
    throw internalError(new Error(`failed calling webhook "${hook.name}": ${response}`));
  }
  for (const w of response.warnings ?? []) if (typeof w === "string") seen.request?.warn(w);
  for (const [k, v] of Object.entries(response.auditAnnotations ?? {})) if (typeof v === "string") seen.request?.annotate(`${hook.name}/${k}`, v);
  if (!response.allowed) throw denial(hook, response);
  return response;
}

/** The request as a matched webhook sees it: its objects converted when it matched an equivalent resource. */
async function seenBy(matched: Matched, attrs: AdmissionAttributes, sources: WebhookSources): Promise<AdmissionAttributes> {
  const as = matched.as;
  if (as === undefined) return attrs;
  const convert = (obj: ApiObject | undefined) => (obj === undefined || attrs.operation === "CONNECT" ? obj : sources.equivalence.convert(obj, attrs.resource, as));
  return { ...attrs, object: await convert(attrs.object), oldObject: await convert(attrs.oldObject) };
}

function replaceContents(target: ApiObject, next: ApiObject): void {
  const t = target as unknown as Record<string, unknown>;
  for (const k of Object.keys(t)) delete t[k];
  Object.assign(t, next);
}

/** The served version of the request's resource and the webhooks of `configs` it goes to. */
async function requestHooks(sources: WebhookSources, attrs: AdmissionAttributes, configs: readonly WebhookConfiguration[]): Promise<{ version: string; hooks: Matched[] }> {
  const version = attrs.version ?? sources.versionOf(attrs.resource.group, attrs.resource.resource);
  return { version, hooks: await matching(sorted(configs), attrs, sources, version) };
}

export function mutatingWebhooks(sources: WebhookSources): MutatingPlugin {
  return {
    name: "MutatingAdmissionWebhook",
    handles: (attrs) => attrs.resource.group !== sources.exemptGroup,
    async admit(attrs) {
      const { version, hooks } = await requestHooks(sources, attrs, await sources.mutating());
      if (hooks.length === 0) return;
      // Which IfNeeded webhooks saw the object before a later change.
      const stale = new Set<number>();
      const round = async (indexes: readonly number[]) => {
        for (const i of indexes) {
          const m = hooks[i]!;
          const hook = m.hook;
          const seen = await seenBy(m, attrs, sources);
          const r = await call(m, seen, sources, version, FAILED_OPEN_MUTATING, i);
          stale.delete(i);
          if (r?.patch === undefined || attrs.object === undefined) continue;
          let ops: unknown;
          try {
            ops = JSON.parse(Buffer.from(r.patch, "base64").toString("utf8"));
          } catch (err) {
            throw internalError(new Error(`failed calling webhook "${hook.name}": received invalid webhook response: ${(err as Error).message}`));
          }
          const before = JSON.stringify(attrs.object);
          let next: ApiObject;
          try {
            // The patch applies to what the webhook saw (a copy: seen.object is the request's own object when no conversion was needed).
            next = applyJsonPatch(structuredClone(seen.object!), ops) as unknown as ApiObject;
            // A patch to an equivalent version's object comes back in the request's version.
            if (m.as !== undefined) next = await sources.equivalence.convert(next, m.as, { ...attrs.resource, version, kind: attrs.kind });
            // Upstream decodes and defaults the patched object: pruned to the schema, defaults filled in.
            attrs.normalize?.(next);
          } catch (err) {
            throw internalError(new Error(`JSON Patch: ${(err as Error).message}`));
          }
          if (JSON.stringify(next) === before) continue;
          replaceContents(attrs.object, next);
          hooks.forEach((h, j) => {
            if (j !== i && h.hook.reinvocationPolicy === "IfNeeded" && (j < i || !indexes.includes(j))) stale.add(j);
          });
        }
      };
      await round(hooks.map((_, i) => i));
      if (stale.size > 0) await round([...stale].sort((a, b) => a - b));
    },
  };
}

export function validatingWebhooks(sources: WebhookSources): ValidatingPlugin {
  return {
    name: "ValidatingAdmissionWebhook",
    handles: (attrs) => attrs.resource.group !== sources.exemptGroup,
    async validate(attrs) {
      const { version, hooks } = await requestHooks(sources, attrs, await sources.validating());
      const results = await Promise.allSettled(hooks.map(async (m, i) => call(m, await seenBy(m, attrs, sources), sources, version, FAILED_OPEN_VALIDATING, i)));
      for (const r of results) if (r.status === "rejected") throw r.reason;
    },
  };
}
